"""Peer test: the official Python MCP SDK's OAuth client provider (`mcp` 2.x) connects to a
KarmaDue hub's connector the way Claude does, with a person approving in headless Chromium.

    KD_HUB_URL=http://127.0.0.1:PORT tests/peers/.venv/bin/python tests/peers/python_oauth_client.py

Run by tests/peers/browser.mjs (scenario e), which drives the browser: this script prints
``AUTHORIZE <url>`` when the SDK wants the person to approve; browser.mjs opens that URL in a
signed-in Chromium page and clicks Approve on the consent screen, and the browser's redirect
lands on this script's loopback callback (``http://127.0.0.1:<port>/callback``, any port, as the
spec allows loopback redirects). Then the SDK does everything else on its own: RFC 9728 and
RFC 8414 discovery from the 401, RFC 7591 registration, PKCE S256, the code exchange (checking
``iss``), and every tools call with the bearer token. This script then checks, through the
SDK's client:

- ``tools/list`` holds what the default grant offers (reads, report_outcome, search and fetch)
  and nothing the connector may not offer (register_agent, rotate_agent_key);
- the connection's hosted agent (verify_agent with no agent_id): ``hosted_connector``,
  ``current.auth_method oauth``, its connection, the passport's note;
- a whole pre-flight: check_before_acting gives a receipt naming the hosted agent, and
  report_outcome without agent_id is accepted, with ``quota`` counting one action;
- a refused tool (register_agent) answers ``needs_your_approval`` with ``required_scope``;
- the refresh token rotates (a form POST to the token endpoint read from the SDK's metadata),
  and the new access token works; revoking the refresh token ends the connection (401).

Prints one line per check and, last, exactly ``N passed, M failed``; exits 1 on any failure.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any
from urllib.parse import parse_qs, urlparse

import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from mcp_types import Implementation
from peer_checks import check, checks

BASE = os.environ.get("KD_HUB_URL", "").rstrip("/")
TARGET = "npm:@modelcontextprotocol/sdk"


class Memory(TokenStorage):
    """Tokens and the registered client, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Callback:
    """The loopback redirect target: one GET /callback?code=&state=&iss=, answered with a page."""

    def __init__(self) -> None:
        self.result: asyncio.Future[dict[str, str]] = asyncio.get_running_loop().create_future()
        self.server: asyncio.base_events.Server | None = None
        self.port = 0

    async def start(self) -> None:
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        line = (await reader.readline()).decode("latin-1")
        while (await reader.readline()) not in (b"\r\n", b"\n", b""):
            pass
        target = line.split(" ")[1] if line.count(" ") >= 2 else "/"
        query = {key: values[0] for key, values in parse_qs(urlparse(target).query).items()}
        body = b"<!doctype html><title>Connected</title><h1>You can close this window.</h1>"
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: " + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n" + body)
        await writer.drain()
        writer.close()
        if urlparse(target).path == "/callback" and not self.result.done():
            self.result.set_result(query)

    async def redirect(self, url: str) -> None:
        print(f"AUTHORIZE {url}", flush=True)

    async def wait(self) -> AuthorizationCodeResult:
        query = await asyncio.wait_for(self.result, timeout=120)
        check("the browser came back to the loopback callback with a code", "code" in query, query)
        check("the redirect carries iss (RFC 9207), the hub's issuer", query.get("iss") == BASE, query)
        return AuthorizationCodeResult(code=query.get("code", ""), state=query.get("state"), iss=query.get("iss"))


def data_of(result: Any) -> dict[str, Any]:
    return result.structured_content or {}


async def tools(client: Client) -> None:
    listing = await client.list_tools()
    names = {tool.name for tool in listing.tools}
    for name in ("discover_resources", "check_before_acting", "report_outcome", "verify_agent", "search", "fetch", "notify_human_of_finding"):
        check(f"tools/list on the connector offers {name}", name in names, sorted(names))
    for name in ("register_agent", "rotate_agent_key", "create_thread", "invite_agent"):
        check(f"tools/list on the connector hides {name}", name not in names, sorted(names))
    report = next((tool for tool in listing.tools if tool.name == "report_outcome"), None)
    required = (report.input_schema or {}).get("required", []) if report else []
    check("agent_id is not required: the server fills it in", "agent_id" not in required, required)


async def hosted_agent(client: Client) -> str:
    me = data_of(await client.call_tool("verify_agent", {}))
    agent = me.get("data") or {}
    check("verify_agent with no agent_id verifies the connection's agent", me.get("ok") is True, me)
    check("it is a hosted_connector agent", agent.get("agent_type") == "hosted_connector", agent)
    check("its label is the person's app", agent.get("display_label") == "Grace's KarmaDue Python peer", agent.get("display_label"))
    current = agent.get("current") or {}
    check("current.auth_method is oauth", current.get("auth_method") == "oauth", current)
    connection = current.get("connection") or {}
    check("current.connection names the app and the approved scopes", connection.get("app") == "KarmaDue Python peer"
          and "kd.outcomes.write" in (connection.get("scopes") or []), connection)
    note = ((agent.get("passport") or {}).get("note")) or ""
    check("the passport says who vouches for it", note.startswith("Connected through KarmaDue Python peer."), note)
    return str(agent.get("agent_id"))


async def preflight(client: Client, agent_id: str) -> None:
    checked = data_of(await client.call_tool("check_before_acting", {"target": TARGET}))
    receipt = (checked.get("data") or {}).get("receipt") or {}
    check("check_before_acting gives a receipt naming the hosted agent", receipt.get("agent_id") == agent_id, checked)
    reported = data_of(await client.call_tool("report_outcome", {"receipt_id": receipt.get("receipt_id"), "result": "worked"}))
    check("report_outcome without agent_id is accepted", reported.get("ok") is True, reported)
    quota = reported.get("quota") or {}
    check("the reply carries quota: 1 of 40 actions used", quota.get("actions_per_day") == 40 and quota.get("used_last_24h") == 1, quota)
    refused = data_of(await client.call_tool("register_agent", {}))
    error = refused.get("error") or {}
    check("register_agent is needs_your_approval with required_scope", error.get("code") == "needs_your_approval"
          and error.get("required_scope") == "kd.self_keyed", refused)
    found = data_of(await client.call_tool("search", {"query": "model context protocol sdk"}))
    results = (found.get("data") or {}).get("results") or []
    check("search answers results with links to human pages", bool(results)
          and all(str(row.get("url", "")).startswith(BASE) for row in results), found)


async def refresh_and_revoke(storage: Memory) -> None:
    """The token endpoint by hand, with what the SDK stored: rotation, then revocation."""
    assert storage.tokens is not None and storage.client is not None
    async with httpx2.AsyncClient() as http:
        metadata = (await http.get(f"{BASE}/.well-known/oauth-authorization-server")).json()
        old = storage.tokens.refresh_token
        answer = await http.post(metadata["token_endpoint"], data={
            "grant_type": "refresh_token", "refresh_token": old, "client_id": storage.client.client_id,
        })
        body = answer.json()
        check("refresh gives a new pair", answer.status_code == 200 and body.get("refresh_token") not in (None, old), body)
        check("token responses are no-store", answer.headers.get("cache-control") == "no-store", dict(answer.headers))
        ping = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        headers = {"accept": "application/json, text/event-stream", "authorization": f"Bearer {body.get('access_token')}"}
        listed = await http.post(f"{BASE}/mcp", json=ping, headers=headers)
        check("the new access token works", listed.status_code == 200, listed.text[:300])
        revoked = await http.post(metadata["revocation_endpoint"], data={"token": body.get("refresh_token"), "client_id": storage.client.client_id})
        check("revocation answers 200", revoked.status_code == 200, revoked.text)
        after = await http.post(f"{BASE}/mcp", json=ping, headers=headers)
        check("after revoking the refresh token its connection is gone (401)", after.status_code == 401
              and "resource_metadata=" in after.headers.get("www-authenticate", ""), after.status_code)


async def main() -> None:
    callback = Callback()
    await callback.start()
    storage = Memory()
    provider = OAuthClientProvider(
        server_url=f"{BASE}/mcp",
        client_metadata=OAuthClientMetadata(
            client_name="KarmaDue Python peer",
            redirect_uris=[f"http://127.0.0.1:{callback.port}/callback"],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=callback.redirect,
        callback_handler=callback.wait,
    )
    async with create_mcp_http_client(auth=provider) as http:
        client = Client(
            streamable_http_client(f"{BASE}/mcp", http_client=http),
            mode="legacy",
            client_info=Implementation(name="karmadue-python-oauth-peer", version="1.0.0"),
        )
        async with client:
            check("the SDK connected through OAuth", storage.tokens is not None, storage.tokens)
            await tools(client)
            agent_id = await hosted_agent(client)
            await preflight(client, agent_id)
    await refresh_and_revoke(storage)


if __name__ == "__main__":
    if not BASE:
        print("KD_HUB_URL is not set", file=sys.stderr)
        sys.exit(2)
    try:
        asyncio.run(main())
    except Exception as error:  # noqa: BLE001 - a crash is one failed check, reported
        check("ran without an unexpected error", False, f"{type(error).__name__}: {error}")
    sys.exit(checks.summary())
