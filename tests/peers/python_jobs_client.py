"""Peer test: jobs and disputes through the official Python MCP SDK (`mcp` 2.x) (issue 32;
docs/decisions.md 460-466).

    KD_HUB_URL=http://127.0.0.1:PORT tests/peers/.venv/bin/python tests/peers/python_jobs_client.py

Registers an agent with its own Ed25519 key (``cryptography``) and signs every call with
kd-mcp-v1 (python_mcp_client.py's ``KdSigner``, the spec's ``canon`` sketch). Then: a quote
(commit false: a read), a committed $0 public job, get_job, cancel_job, a second cancel refused
(wrong state), a private commit refused with spend_cap whose history shows nothing new, and
open_dispute about the cancelled job. Nothing here uses the hub's code.

Prints one line per check and, last, exactly ``N passed, M failed``; exits 1 on any failure.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import sys
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import Implementation
from peer_checks import check, checks
from python_mcp_client import KdSigner, b64url

BASE = os.environ.get("KD_HUB_URL", "").rstrip("/")


async def tool(client: Client, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """The structured reply of a tools/call."""
    return (await client.call_tool(name, args)).structured_content or {}


async def register(client: Client, signer: KdSigner) -> str:
    """Registers a fresh agent with its own key; signs from then on."""
    challenge = (await tool(client, "register_challenge", {})).get("data") or {}
    key = Ed25519PrivateKey.generate()
    registered = await tool(
        client,
        "register_agent",
        {
            "name": f"py-jobs-{secrets.token_hex(5)}",
            "platform": "python-mcp-sdk",
            "public_key": b64url(key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)),
            "challenge_id": challenge.get("challenge_id"),
            "signature": b64url(key.sign(str(challenge.get("payload", "")).encode())),
        },
    )
    agent_id = (registered.get("data") or {}).get("agent_id")
    check("register_agent ok", registered.get("ok") is True and isinstance(agent_id, str), registered)
    signer.key, signer.agent_id = key, agent_id
    return agent_id


async def history_len(client: Client, agent_id: str) -> int:
    reply = await tool(client, "get_history", {"agent_id": agent_id, "limit": 200})
    return len((reply.get("data") or {}).get("events") or [])


async def run() -> None:
    signer = KdSigner()
    async with create_mcp_http_client(auth=signer) as http:
        transport = streamable_http_client(f"{BASE}/functions/v1/mcp", http_client=http)
        client = Client(transport, mode="auto", client_info=Implementation(name="karmadue-python-jobs-peer", version="1.0.0"))
        async with client:
            names = {listed.name for listed in (await client.list_tools()).tools}
            for name in ("request_verification", "get_job", "cancel_job", "open_dispute"):
                check(f"tools/list has {name}", name in names, sorted(names))
            agent_id = await register(client, signer)
            me = {"agent_id": agent_id}
            quote = await tool(client, "request_verification", {**me, "title": "Check the README", "method": "license-review@1", "scope": "private"})
            q = (quote.get("data") or {}).get("quote") or {}
            check("a private license-review@1 quote is $10.00 and over the $0 cap", q.get("price_usd_cents") == 1000 and q.get("fits") is False, quote)
            check("a quote is not committed", (quote.get("data") or {}).get("committed") is False, quote)
            opened = await tool(client, "request_verification", {**me, "title": "Check the README", "commit": True})
            job = (opened.get("data") or {}).get("job") or {}
            job_id = job.get("job_id", "")
            check("commit opens a $0 public job", opened.get("ok") is True and job.get("status") == "open" and job_id.startswith("kdjob_"), opened)
            check("the title is third-party text (untrusted_content)", job.get("title") is None and any(item.get("id") == job_id for item in opened.get("untrusted_content", {}).get("items", [])), opened)
            read = await tool(client, "get_job", {**me, "job_id": job_id})
            check("get_job reads it", ((read.get("data") or {}).get("job") or {}).get("status") == "open", read)
            cancelled = await tool(client, "cancel_job", {**me, "job_id": job_id})
            check("cancel_job cancels it", ((cancelled.get("data") or {}).get("job") or {}).get("status") == "cancelled", cancelled)
            again = await tool(client, "cancel_job", {**me, "job_id": job_id})
            check("a second cancel is refused (validation, job_id)", (again.get("error") or {}).get("field") == "job_id", again)
            before = await history_len(client, agent_id)
            capped = await tool(client, "request_verification", {**me, "title": "Private", "scope": "private", "commit": True})
            check("a private commit is refused with spend_cap", (capped.get("error") or {}).get("code") == "spend_cap", capped)
            check("the refusal recorded nothing", await history_len(client, agent_id) == before, before)
            dispute = await tool(client, "open_dispute", {**me, "subject_type": "job", "subject_id": job_id, "reason": "A test dispute"})
            d = (dispute.get("data") or {})
            check("open_dispute records, never decides", d.get("decided") is False and (d.get("dispute") or {}).get("status") == "open", dispute)
            check("the history shows the job and the dispute", await history_len(client, agent_id) == before + 1, before)


if __name__ == "__main__":
    if not BASE:
        print("KD_HUB_URL is not set (e.g. http://127.0.0.1:8787)", file=sys.stderr)
        sys.exit(2)
    try:
        asyncio.run(run())
    except Exception as error:  # a crash is a failure
        check("ran without an unexpected error", False, f"{type(error).__name__}: {error}")
    sys.exit(checks.summary())
