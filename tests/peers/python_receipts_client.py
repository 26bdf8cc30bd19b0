"""Peer test: receipts, outcome records and the badge, checked independently with Python
`cryptography` (Ed25519) and urllib only. No MCP SDK and none of the hub's code.

    KD_HUB_URL=http://127.0.0.1:PORT tests/peers/.venv/bin/python tests/peers/python_receipts_client.py

The hub must hold the bundled catalog (it loads on first start). It checks:

1. registration over REST (register_challenge, sign the payload, register_agent);
2. a signed check_before_acting (x-karmadue-agent plus kd-mcp-v1 headers) on
   kd:res:github:modelcontextprotocol/servers: the receipt names this agent, signed_text is
   rebuilt from the fields (kd-receipt-v1: recipe, receipt_id, kd_resource_id, version, commit,
   issued_at in Unix seconds, agent_id, joined by LF), the signature verifies with kd-passport-1
   from /.well-known/jwks.json, and a changed text does not verify;
3. an anonymous check over POST /v1/preflight with `action`: a receipt with an empty agent line;
4. report_outcome, signed: the kd-outcome-v1 text is rebuilt from the fields (recipe, report id,
   receipt id, resource id, version_used, result, reason_code, SHA-256 of the note, reporter,
   Unix time), its SHA-256 is record_hash, and the signature verifies; the note comes back only
   in untrusted_content;
5. the refusals already_reported, receipt_mismatch and receipt_not_found with their statuses;
6. the badge: SVG and format=json, both cached for an hour, and the resource page showing the
   reliability report;
7. trust_query: the kd-trust-v1 text rebuilt from the answer's fields (recipe, agent, passport,
   amount in cents, skill, who asked, reason, trust score, skill score, Unix seconds) verifies with
   kd-passport-1, and a fraction of a cent is refused.

Prints one line per check and, last, exactly ``N passed, M failed``; exits 1 on any failure.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import sys
import time
import urllib.error
import urllib.request
from datetime import datetime
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from peer_checks import canon, check, checks

BASE = os.environ.get("KD_HUB_URL", "").rstrip("/")
SERVERS = "kd:res:github:modelcontextprotocol/servers"
FOURTEEN_DAYS = 14 * 24 * 3600


# ---- signing (the spec's Python sketch of kd-mcp-v1) --------------------------------------


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def signed_headers(key: Ed25519PrivateKey, tool: str, agent_id: str, args: Any) -> dict[str, str]:
    ts = int(time.time())
    nonce = "rc-" + secrets.token_hex(12)
    text = "\n".join(["kd-mcp-v1", tool, agent_id, str(ts), nonce, hashlib.sha256(canon(args).encode()).hexdigest()])
    return {
        "x-kd-signature": b64url(key.sign(text.encode())),
        "x-kd-timestamp": str(ts),
        "x-kd-nonce": nonce,
    }


def verifies(public_key: Ed25519PublicKey, text: str, signature: str) -> bool:
    try:
        public_key.verify(b64url_decode(signature), text.encode())
        return True
    except (InvalidSignature, ValueError):
        return False


def unix_seconds(rfc3339: str) -> int:
    return int(datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp())


# ---- HTTP --------------------------------------------------------------------------------


def http(method: str, path: str, body: str | None = None, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
    data = body.encode() if body is not None else None
    request = urllib.request.Request(BASE + path, data=data, method=method)
    if data is not None:
        request.add_header("content-type", "application/json")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read().decode()


def post_json(path: str, args: Any, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    status, _, text = http("POST", path, json.dumps(args, ensure_ascii=False), headers)
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text


def tool(name: str, args: Any, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    return post_json(f"/functions/v1/public-api/v1/tools/{name}", args, headers)


# ---- checks ------------------------------------------------------------------------------


def receipt_text(receipt: dict[str, Any]) -> str:
    target = receipt["target"]
    return "\n".join(
        [
            "kd-receipt-v1",
            receipt["receipt_id"],
            target["kd_resource_id"],
            target["version"] or "",
            target["commit"] or "",
            str(unix_seconds(receipt["issued_at"])),
            receipt["agent_id"] or "",
        ]
    )


def main() -> int:
    if not BASE:
        print("set KD_HUB_URL to the hub's base URL, e.g. http://127.0.0.1:8080")
        return 2

    status, _, text = http("GET", "/.well-known/jwks.json")
    jwks = json.loads(text)
    jwk = next(key for key in jwks["keys"] if key["kid"] == "kd-passport-1")
    passport_key = Ed25519PublicKey.from_public_bytes(b64url_decode(jwk["x"]))
    check("jwks publishes kd-passport-1 (Ed25519)", status == 200 and jwk["crv"] == "Ed25519", jwk)

    # 1. register
    key = Ed25519PrivateKey.generate()
    public_key = b64url(key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))
    _, challenge = tool("register_challenge", {})
    payload = challenge["data"]["payload"]
    status, registered = tool(
        "register_agent",
        {
            "name": "receipts peer " + secrets.token_hex(5),
            "platform": "python-cryptography",
            "public_key": public_key,
            "challenge_id": challenge["data"]["challenge_id"],
            "signature": b64url(key.sign(payload.encode())),
        },
    )
    check("register_agent", status == 200 and registered.get("ok") is True, registered)
    agent_id = registered["data"]["agent_id"]

    # 2. a signed check
    args = {"target": SERVERS, "intended_action": "clone"}
    headers = signed_headers(key, "check_before_acting", agent_id, args) | {"x-karmadue-agent": agent_id}
    status, checked = tool("check_before_acting", args, headers)
    check("signed check_before_acting answers the real record", status == 200 and checked["data"]["resource"]["resource_id"] == SERVERS, checked)
    data = checked["data"]
    receipt = data["receipt"]
    check("the receipt names this agent", receipt["agent_id"] == agent_id, receipt)
    check("the receipt is kd-receipt-v1 with a kdr_ id", receipt["recipe"] == "kd-receipt-v1" and receipt["receipt_id"].startswith("kdr_"), receipt)
    rebuilt = receipt_text(receipt)
    check("signed_text rebuilt from the fields is byte for byte the hub's", rebuilt == receipt["signed_text"], (rebuilt, receipt["signed_text"]))
    check("issued_at_unix matches issued_at", receipt["issued_at_unix"] == unix_seconds(receipt["issued_at"]), receipt)
    check("the receipt expires 14 days after it was issued", unix_seconds(receipt["expires_at"]) - unix_seconds(receipt["issued_at"]) == FOURTEEN_DAYS, receipt)
    check("the receipt signature verifies with kd-passport-1", verifies(passport_key, rebuilt, receipt["signature"]))
    check("a changed receipt text does not verify", not verifies(passport_key, rebuilt.replace(SERVERS, SERVERS + "x"), receipt["signature"]))
    check(
        "warnings and does_not_prove come with the check",
        isinstance(data["warnings"], list) and all(isinstance(line, str) for line in data["does_not_prove"]) and data["does_not_prove"],
        data,
    )
    check("metadata claims are not verification", data["counts_as_verification"] is False, data["counts_as_verification"])

    # 3. anonymous preflight over REST
    status, anonymous = post_json("/functions/v1/public-api/v1/preflight", {"target": "https://github.com/modelcontextprotocol/servers", "action": "clone"})
    anon_receipt = anonymous["data"]["receipt"] if status == 200 else {}
    check("POST /v1/preflight takes action", status == 200 and anonymous["data"]["intended_action"] == "clone", anonymous)
    check(
        "an anonymous receipt signs an empty agent line",
        anon_receipt.get("agent_id") is None and anon_receipt["signed_text"].endswith("\n") and verifies(passport_key, receipt_text(anon_receipt), anon_receipt["signature"]),
        anon_receipt,
    )

    # 4. report_outcome
    note = "Cloned and ran the fetch server from the Python peer — café ✓"
    args = {"agent_id": agent_id, "receipt_id": receipt["receipt_id"], "result": "worked", "reason_code": "peer_check", "note": note}
    status, reported = tool("report_outcome", args, signed_headers(key, "report_outcome", agent_id, args))
    check("report_outcome is accepted", status == 200 and reported.get("ok") is True, reported)
    report = reported["data"]
    items = reported.get("untrusted_content", {}).get("items", [])
    check("the note comes back only as untrusted content", report["note"] is None and {"id": report["report_id"], "field": "note", "text": note} in items, (report["note"], items))
    outcome_text = "\n".join(
        [
            "kd-outcome-v1",
            report["report_id"],
            receipt["receipt_id"],
            SERVERS,
            report["version_used"] or "",
            "worked",
            "peer_check",
            hashlib.sha256(note.encode()).hexdigest(),
            agent_id,
            str(report["reported_at_unix"]),
        ]
    )
    record = report["record"]
    check("kd-outcome-v1 rebuilt from the fields is the hub's canonical_text", outcome_text == record["canonical_text"], (outcome_text, record["canonical_text"]))
    check("record_hash is SHA-256 of the canonical text", hashlib.sha256(outcome_text.encode()).hexdigest() == record["record_hash"], record)
    check("the outcome signature verifies with kd-passport-1", verifies(passport_key, outcome_text, record["signature"]))
    check("reported_at_unix matches reported_at", report["reported_at_unix"] == unix_seconds(report["reported_at"]), report)
    check(
        "a new agent without an owner is weighed 0.25, with reasons",
        report["weight"] == 0.25 and set(report["flags"]) == {"no_owner", "new_agent"} and len(report["weight_reasons"]) == 2,
        report,
    )
    check("the report is labelled, never a check", report["label"] == "Reported by an agent after use. Not a KarmaDue check." and report["counts_as_verification"] is False, report)

    # 5. refusals
    args = {"agent_id": agent_id, "receipt_id": receipt["receipt_id"], "result": "broke"}
    status, again = tool("report_outcome", args, signed_headers(key, "report_outcome", agent_id, args))
    check("a second report is already_reported (400)", status == 400 and again["error"]["code"] == "already_reported", again)
    args = {"agent_id": agent_id, "receipt_id": anon_receipt.get("receipt_id", ""), "result": "worked"}
    status, mismatch = tool("report_outcome", args, signed_headers(key, "report_outcome", agent_id, args))
    check("an anonymous receipt is receipt_mismatch (400)", status == 400 and mismatch["error"]["code"] == "receipt_mismatch", mismatch)
    args = {"agent_id": agent_id, "receipt_id": "kdr_" + "0" * 24, "result": "worked"}
    status, missing = tool("report_outcome", args, signed_headers(key, "report_outcome", agent_id, args))
    check("an unknown receipt is receipt_not_found (404)", status == 404 and missing["error"]["code"] == "receipt_not_found", missing)

    # 6. badge and page
    status, headers, text = http("GET", f"/functions/v1/public-api/v1/badge.svg?id={SERVERS}&format=json")
    badge = json.loads(text) if status == 200 else {}
    check(
        "badge format=json gives the state, cached for an hour",
        status == 200 and badge.get("state") == "listed" and badge.get("resource_id") == SERVERS and headers.get("cache-control") == "public, max-age=3600",
        (status, headers, text),
    )
    check("badge data never claims a security warning without a feed", badge.get("security_warning") is False, badge)
    status, headers, text = http("GET", f"/functions/v1/public-api/v1/badge.svg?id={SERVERS}")
    check(
        "badge.svg is SVG saying KarmaDue: listed",
        status == 200 and headers.get("content-type", "").startswith("image/svg+xml") and "KarmaDue: listed" in text,
        (status, headers, text[:200]),
    )
    status, _, page = http("GET", f"/resource?id={SERVERS}")
    check(
        "the resource page shows the reliability report, not as a check",
        status == 200 and "Reliability reports from agents, not a safety or trust check" in page and "1 agent with no owner reported" in page and "<script" not in page,
        page[:300],
    )
    status, checked = tool("check_before_acting", {"target": SERVERS})
    summary = checked.get("data", {}).get("reliability_reports", {})
    check("check_before_acting shows reliability_reports after a report", summary.get("reports", 0) >= 1 and summary.get("label") == "Reliability reports from agents, not a safety or trust check", summary)

    # 7. trust_query: the answer signed as kd-trust-v1
    status, asked = tool("trust_query", {"subject_id": agent_id, "amount_usd": 2.5})
    answer = asked.get("data", {})
    proof = answer.get("proof", {})
    check("trust_query about an agent with no owner is independent, not allowed", status == 200 and answer.get("reason") == "independent" and answer.get("allowed") is False, asked)
    check("the amount is 250 whole cents and checked_at_unix matches checked_at", answer.get("amount_usd_cents") == 250 and proof.get("checked_at_unix") == unix_seconds(proof.get("checked_at", "1970-01-01T00:00:00Z")), answer)
    basis = answer.get("basis", {})
    trust_text = "\n".join([
        "kd-trust-v1", answer.get("agent_id", ""), proof.get("passport_id", ""), str(answer.get("amount_usd_cents")), answer.get("skill") or "",
        basis.get("asked_by") or "", answer.get("reason", ""), str(basis.get("trust_score")), "", str(unix_seconds(proof.get("checked_at", "1970-01-01T00:00:00Z"))),
    ])
    check("kd-trust-v1 rebuilt from the fields is the hub's signed_text", trust_text == proof.get("signed_text"), (trust_text, proof.get("signed_text")))
    check("the trust answer's signature verifies with kd-passport-1", verifies(passport_key, trust_text, proof.get("signature", "")))
    check("a changed trust answer does not verify", not verifies(passport_key, trust_text.replace("independent", "ok"), proof.get("signature", "")))
    status, bad = tool("trust_query", {"subject_id": agent_id, "amount": 0.001})
    check("a fraction of a cent is refused (400 validation, field amount)", status == 400 and bad["error"]["code"] == "validation" and bad["error"]["field"] == "amount", bad)

    return checks.summary()


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as error:  # an unexpected answer shape is a failure, never a crash without a summary
        checks.failed += 1
        print(f"FAIL unexpected error: {error!r}")
        checks.summary()
        sys.exit(1)
