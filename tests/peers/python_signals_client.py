"""Peer signals from the outside (issue 32; docs/decisions.md 470-475).

1. The kd-attest-v1 worked example of /functions/v1/docs/docs/attestations.md, rebuilt here
   from the page's fields with our own byte construction: its SHA-256 (hashlib) and its Ed25519
   signature under the published example key, seed bytes 00..1f (cryptography), both as the
   page prints them.
2. Through the official Python MCP client (mcp 2.x) against KD_HUB_URL: two fresh agents; the
   attester signs its own kd-attest-v1 text with cryptography and attest_peer stores it; a
   text that differs from the arguments is bad_signature; an evidence-free peer review is
   stored as not counted and the subject's trust does not move. (A counted signal needs an
   admitted author, which this client cannot become: the API suite covers that, and the
   same-owner case, in crates/karmadue/tests/api/signals/.)

Run by scripts/peers.sh against the plain hub. None of the hub's code.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import re
import secrets
import sys
import urllib.request

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from peer_checks import check, checks

BASE = os.environ.get("KD_HUB_URL", "").rstrip("/")
EVIDENCE = "https://example.org/pr/42"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def attest_text(attester: str, subject: str, task_ref: str, outcome: str, kind: str, ref: str) -> bytes:
    """kd-attest-v1 as the page documents it: seven lines, LF, no trailing LF, UTF-8."""
    lines = [
        "kd-attest-v1",
        "attester:" + attester,
        "subject:" + subject,
        "task_ref:" + task_ref,
        "outcome:" + outcome,
        "evidence_kind:" + kind,
        "evidence_ref:" + ref,
    ]
    return "\n".join(lines).encode("utf-8")


def field(page: str, name: str) -> str:
    found = re.search(r"^- " + re.escape(name) + r": `([^`]*)`", page, re.MULTILINE)
    return found.group(1) if found else ""


def worked_example() -> None:
    with urllib.request.urlopen(f"{BASE}/functions/v1/docs/docs/attestations.md") as reply:
        page = reply.read().decode()
    example = page[page.index("## Worked example"):]
    key = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
    public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    check("attest: the published key is seed 00..1f", b64url(public) == field(example, "public_key"), field(example, "public_key"))
    text = attest_text(
        field(example, "attester_agent_id"),
        field(example, "subject_agent_id"),
        field(example, "task_ref"),
        field(example, "outcome"),
        field(example, "evidence_kind"),
        field(example, "evidence_ref"),
    )
    shown = field(example, "text to sign, with LF shown as `\\n`")
    if not shown:
        found = re.search(r"text to sign, with LF shown as `\\n`: `([^`]*)`", example)
        shown = found.group(1) if found else ""
    check("attest: our bytes are the page's text", text.decode().replace("\n", "\\n") == shown, shown)
    check("attest: SHA-256 (hashlib)", hashlib.sha256(text).hexdigest() == field(example, "SHA-256 of the text"), field(example, "SHA-256 of the text"))
    signature = field(example, "signature")
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(unb64url(signature), text)
        verified = True
    except Exception as error:  # noqa: BLE001 - any failure is the check's
        verified = False
        signature += f" ({error})"
    check("attest: the page's signature verifies (cryptography)", verified, signature)
    check("attest: Ed25519 is deterministic: we sign the same bytes", b64url(key.sign(text)) == field(example, "signature"))


async def over_mcp() -> None:
    # Imported here so the worked example needs only cryptography.
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from mcp_types import Implementation
    from python_mcp_client import KdSigner

    signer = KdSigner()
    async with create_mcp_http_client(auth=signer) as http:
        transport = streamable_http_client(f"{BASE}/functions/v1/mcp", http_client=http)
        client = Client(transport, client_info=Implementation(name="karmadue-python-signals-peer", version="1.0.0"))
        async with client:

            async def call(name: str, args: dict) -> dict:
                result = await client.call_tool(name, args)
                return result.structured_content or {}

            async def register(label: str) -> tuple[Ed25519PrivateKey, str]:
                challenge = (await call("register_challenge", {}))["data"]
                key = Ed25519PrivateKey.generate()
                public = b64url(key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))
                reply = await call("register_agent", {
                    "name": f"{label}-{secrets.token_hex(4)}", "platform": "python-mcp-sdk", "public_key": public,
                    "challenge_id": challenge["challenge_id"], "signature": b64url(key.sign(challenge["payload"].encode())),
                })
                return key, reply["data"]["agent_id"]

            async def trust(agent_id: str) -> int:
                return (await call("read_scores", {"agent_id": agent_id}))["data"]["trust_score"]

            names = {tool.name for tool in (await client.list_tools()).tools}
            for name in ("attest_peer", "submit_peer_review", "record_outcome"):
                check(f"mcp: tools/list has {name}", name in names)
            attester_key, attester = await register("py-attester")
            _, subject = await register("py-subject")
            before = await trust(subject)
            text = attest_text(attester, subject, "py-task-1", "delivered", "principal_confirmation", EVIDENCE)
            args = {
                "attester_agent_id": attester, "subject_agent_id": subject, "task_ref": "py-task-1",
                "outcome": "delivered", "evidence_kind": "principal_confirmation", "evidence_ref": EVIDENCE,
                "signature": b64url(attester_key.sign(text)),
            }
            reply = await call("attest_peer", args)
            signal = (reply.get("data") or {}).get("signal") or {}
            check("mcp: attest_peer with our signature is stored", reply.get("ok") is True and signal.get("signal_id", "").startswith("kdsg_"), reply)
            check("mcp: an unadmitted attester weighs 0", signal.get("counted") is False and signal.get("not_counted_reason") == "author_not_admitted", signal)
            wrong = dict(args, task_ref="py-task-2")
            reply = await call("attest_peer", wrong)
            check("mcp: a signature over other bytes is bad_signature", (reply.get("error") or {}).get("code") == "bad_signature", reply)
            signer.key, signer.agent_id = attester_key, attester
            reply = await call("submit_peer_review", {"agent_id": attester, "subject_agent_id": subject, "task_ref": "py-review", "score": 90})
            signer.key = None
            signal = (reply.get("data") or {}).get("signal") or {}
            check("mcp: an evidence-free review is stored, not counted", reply.get("ok") is True and signal.get("not_counted_reason") == "no_evidence", reply)
            check("mcp: the subject's trust did not move", await trust(subject) == before, before)


def main() -> int:
    if not BASE:
        print("KD_HUB_URL is not set", file=sys.stderr)
        return 2
    worked_example()
    if os.environ.get("KD_SIGNALS_EXAMPLE_ONLY") != "1":
        asyncio.run(over_mcp())
    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
