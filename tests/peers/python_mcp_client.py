"""Peer test: the official Python MCP SDK (`mcp` 2.x) against a KarmaDue hub, in both eras.

    KD_HUB_URL=http://127.0.0.1:PORT tests/peers/.venv/bin/python tests/peers/python_mcp_client.py

`mcp.Client(transport, mode=...)` runs once per mode:

- ``legacy``: the 2025-11-25 initialize handshake;
- ``auto``: probes ``server/discover`` and adopts 2026-07-28 when the server answers it;
- ``2026-07-28``: the stateless era pinned, no probe (every request carries the modern
  ``_meta`` and the ``MCP-Protocol-Version`` / ``Mcp-Method`` / ``Mcp-Name`` headers).

In each mode it lists the tools, calls register_challenge and verify_agent and checks
``structured_content``, registers an agent with its own Ed25519 key (``cryptography``), and
makes a signed write (rename_agent): an ``httpx2.Auth`` adds the kd-mcp-v1 headers computed
over the outgoing ``params.arguments``, with the spec's Python ``canon`` sketch. Nothing here
uses the hub's code.

Prints one line per check and, last, exactly ``N passed, M failed``; exits 1 on any failure.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import secrets
import sys
import time
import uuid
from typing import Any

import httpx2
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import Implementation
from peer_checks import canon, check, checks

BASE = os.environ.get("KD_HUB_URL", "").rstrip("/")
MODES = ("legacy", "auto", "2026-07-28")


# ---- kd-mcp-v1, as in the spec's Python sketch ----------------------------------------------


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class KdSigner(httpx2.Auth):
    """Signs every ``tools/call`` POST with kd-mcp-v1 while ``key`` is set."""

    requires_request_body = True

    def __init__(self) -> None:
        self.key: Ed25519PrivateKey | None = None
        self.agent_id: str | None = None

    def auth_flow(self, request: httpx2.Request):  # type: ignore[override]
        if self.key is not None and request.method == "POST" and request.content:
            try:
                message = json.loads(request.content)
            except ValueError:
                message = None
            if isinstance(message, dict) and message.get("method") == "tools/call":
                params = message.get("params") or {}
                args = params.get("arguments") or {}
                ts = int(time.time())
                nonce = "n-" + secrets.token_hex(12)
                digest = hashlib.sha256(canon(args).encode()).hexdigest()
                text = "\n".join(["kd-mcp-v1", params["name"], self.agent_id or "", str(ts), nonce, digest])
                request.headers["x-kd-signature"] = b64url(self.key.sign(text.encode()))
                request.headers["x-kd-timestamp"] = str(ts)
                request.headers["x-kd-nonce"] = nonce
        yield request


# ---- one mode ----------------------------------------------------------------------------


async def run_mode(mode: str) -> None:
    url = f"{BASE}/functions/v1/mcp"
    signer = KdSigner()
    async with create_mcp_http_client(auth=signer) as http:
        transport = streamable_http_client(url, http_client=http)
        client = Client(
            transport,
            mode=mode,
            client_info=Implementation(name="karmadue-python-mcp-peer", version="1.0.0"),
        )
        async with client:
            tag = f"[{mode}]"
            version = client.protocol_version
            expected = "2025-11-25" if mode == "legacy" else "2026-07-28"
            check(f"{tag} negotiated protocol version {expected}", version == expected, version)
            if mode == "2026-07-28":
                # A pinned mode adopts a synthesized discover result without asking the server,
                # so send server/discover explicitly and check the server's own answer.
                raw = await client.session.send_discover("2026-07-28")
                discovered = raw if isinstance(raw, dict) else raw.model_dump(by_alias=True)
                check(f"{tag} server/discover lists 2026-07-28", "2026-07-28" in discovered.get("supportedVersions", []), discovered)
                server_name = ((discovered.get("_meta") or {}).get("io.modelcontextprotocol/serverInfo") or {}).get("name")
                check(f"{tag} server/discover serverInfo.name is karmadue", server_name == "karmadue", discovered)
                check(f"{tag} server/discover tools capability", "tools" in (discovered.get("capabilities") or {}), discovered)
            else:
                info = client.server_info
                check(f"{tag} serverInfo.name is karmadue", info is not None and info.name == "karmadue", info)
                check(f"{tag} tools capability", client.server_capabilities.tools is not None, client.server_capabilities)

            listing = await client.list_tools()
            names = {tool.name for tool in listing.tools}
            for name in ("register_challenge", "register_agent", "verify_agent", "rename_agent"):
                check(f"{tag} tools/list has {name}", name in names, sorted(names))
            bare = [
                tool.name
                for tool in listing.tools
                if tool.annotations is None
                or tool.annotations.read_only_hint is None
                or tool.annotations.destructive_hint is None
                or tool.annotations.idempotent_hint is None
                or tool.annotations.open_world_hint is None
            ]
            check(f"{tag} every tool carries all annotations", not bare, bare)

            challenge = await client.call_tool("register_challenge", {})
            sc = challenge.structured_content or {}
            data = sc.get("data") or {}
            check(
                f"{tag} register_challenge structured_content ok",
                not challenge.is_error and sc.get("ok") is True and isinstance(data.get("challenge_id"), str),
                sc,
            )
            check(f"{tag} register_challenge request_id", isinstance(sc.get("request_id"), str), sc)

            unknown = await client.call_tool("verify_agent", {"agent_id": str(uuid.uuid4())})
            usc = unknown.structured_content or {}
            check(
                f"{tag} verify_agent(unknown) is_error not_found",
                unknown.is_error and usc.get("ok") is False and (usc.get("error") or {}).get("code") == "not_found",
                usc,
            )

            try:
                await client.call_tool("no_such_tool", {})
                code = None
            except MCPError as error:
                code = error.code
            check(f"{tag} unknown tool is JSON-RPC -32602", code == -32602, code)

            # registration with our own key, then a signed write
            key = Ed25519PrivateKey.generate()
            public_key = b64url(key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))
            name = f"py-{mode[:3]}-{secrets.token_hex(5)}"
            registered = await client.call_tool(
                "register_agent",
                {
                    "name": name,
                    "platform": "python-mcp-sdk",
                    "public_key": public_key,
                    "challenge_id": data.get("challenge_id"),
                    "signature": b64url(key.sign(str(data.get("payload", "")).encode())),
                },
            )
            rsc = registered.structured_content or {}
            agent_id = (rsc.get("data") or {}).get("agent_id")
            check(f"{tag} register_agent ok", rsc.get("ok") is True and isinstance(agent_id, str), rsc)

            new_name = f"py-renamed-{secrets.token_hex(5)}"
            unsigned = await client.call_tool("rename_agent", {"agent_id": agent_id, "name": new_name})
            check(
                f"{tag} rename_agent unsigned: signature_required",
                unsigned.is_error and ((unsigned.structured_content or {}).get("error") or {}).get("code") == "signature_required",
                unsigned.structured_content,
            )
            signer.key, signer.agent_id = key, agent_id
            renamed = await client.call_tool("rename_agent", {"agent_id": agent_id, "name": new_name})
            signer.key = None
            nsc = renamed.structured_content or {}
            check(
                f"{tag} rename_agent signed: ok",
                not renamed.is_error and nsc.get("ok") is True and (nsc.get("data") or {}).get("name") == new_name,
                nsc,
            )


async def main() -> None:
    for mode in MODES:
        try:
            await run_mode(mode)
        except Exception as error:  # a crash in one mode is a failure, the next mode still runs
            check(f"[{mode}] ran without an unexpected error", False, f"{type(error).__name__}: {error}")


if __name__ == "__main__":
    if not BASE:
        print("KD_HUB_URL is not set (e.g. http://127.0.0.1:8787)", file=sys.stderr)
        sys.exit(2)
    asyncio.run(main())
    sys.exit(checks.summary())
