"""Peer test: an independent kd-mcp-v1 client built only on Python `cryptography` (Ed25519) and
urllib, against a KarmaDue hub's REST API. No MCP SDK and none of the hub's code.

    KD_HUB_URL=http://127.0.0.1:PORT tests/peers/.venv/bin/python tests/peers/python_crypto_client.py

It checks:

1. the spec's worked example ("Signing a write (kd-mcp-v1)"): with the published seed
   00 01 … 1f, the public key, canonical arguments text, hash, text to sign and signature are
   byte-for-byte the published ones;
2. registration over REST (register_challenge → sign the payload → register_agent), and the
   passport's signature verified with the key from /.well-known/jwks.json;
3. a signed write (rename_agent) signed exactly like the spec's Python sketch (``canon``);
4. each refusal over REST with its HTTP status and error.code: signature_required,
   stale_signature, bad_nonce, bad_signature, replay (401) and agent_mismatch (403);
5. the MCP endpoint's transport rules on raw HTTP (notes/mcp-oauth.md §1.1): notifications get
   202 with no body, a request id must be a string or an integer (never null), params must be an
   object, batches are refused, GET gets 405, and a foreign Host or Origin gets 403.

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
import uuid
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from peer_checks import canon, check, checks, text_to_sign

BASE = os.environ.get("KD_HUB_URL", "").rstrip("/")


# ---- the spec's Python sketch ------------------------------------------------------------


def sign_b64url(private_key: Ed25519PrivateKey, text: str) -> str:
    return base64.urlsafe_b64encode(private_key.sign(text.encode())).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def public_b64url(private_key: Ed25519PrivateKey) -> str:
    raw = private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def fresh_nonce() -> str:
    return "n-" + secrets.token_hex(12)


# ---- HTTP --------------------------------------------------------------------------------


def http(method: str, path: str, body: str | None = None, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    data = body.encode() if body is not None else None
    request = urllib.request.Request(BASE + path, data=data, method=method)
    if data is not None:
        request.add_header("content-type", "application/json")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, text = response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        status, text = error.code, error.read().decode()
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text


def call(tool: str, args: dict[str, Any], headers: dict[str, str] | None = None, body: str | None = None) -> tuple[int, Any]:
    return http("POST", f"/functions/v1/public-api/v1/tools/{tool}", body if body is not None else json.dumps(args), headers)


def signed_headers(key: Ed25519PrivateKey, tool: str, agent_id: str, args: Any, *, ts: int | None = None, nonce: str | None = None) -> dict[str, str]:
    ts = int(time.time()) if ts is None else ts
    nonce = fresh_nonce() if nonce is None else nonce
    return {
        "x-kd-signature": sign_b64url(key, text_to_sign(tool, agent_id, ts, nonce, args)),
        "x-kd-timestamp": str(ts),
        "x-kd-nonce": nonce,
    }


def error_code(body: Any) -> Any:
    return (body.get("error") or {}).get("code") if isinstance(body, dict) else body


# ---- 1. the worked example -----------------------------------------------------------------


def worked_example() -> None:
    key = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
    args = {
        "agent_id": "00000000-0000-4000-8000-000000000001",
        "finding_id": "11111111-2222-4333-8444-555555555555",
        "reason": "test, café",
    }
    canonical = canon(args)
    digest = hashlib.sha256(canonical.encode()).hexdigest()
    text = text_to_sign("withdraw_finding", args["agent_id"], 1791700000, "n-3f9a1c2e7b5d4f60", args)
    check("worked example: public key", public_b64url(key) == "A6EHv_POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg", public_b64url(key))
    check(
        "worked example: canonical arguments text",
        canonical
        == '{"reason": "test, café", "agent_id": "00000000-0000-4000-8000-000000000001", "finding_id": "11111111-2222-4333-8444-555555555555"}',
        canonical,
    )
    check("worked example: arguments hash", digest == "d4c5d794a6ebcfd92cbc37b0ac8119475e5ab7ed85bbe522d9aebf730eb96498", digest)
    check(
        "worked example: text to sign",
        text
        == "kd-mcp-v1\nwithdraw_finding\n00000000-0000-4000-8000-000000000001\n1791700000\nn-3f9a1c2e7b5d4f60\n"
        "d4c5d794a6ebcfd92cbc37b0ac8119475e5ab7ed85bbe522d9aebf730eb96498",
        text,
    )
    signature = sign_b64url(key, text)
    check(
        "worked example: signature",
        signature == "tfqegxIsYOO_QAOBGLjyFrP3IrWX-PHqWUEaDXjDRvi76ikl7lwt7eCRMfEa10vwYdLaeO8QaYck1X4YFOpuBA",
        signature,
    )


# ---- 2. registration and the passport --------------------------------------------------------


def jwks_key(path: str) -> Ed25519PublicKey | None:
    status, body = http("GET", path)
    keys = body.get("keys", []) if isinstance(body, dict) else []
    jwk = next((k for k in keys if k.get("kid") == "kd-passport-1"), None)
    check(
        f"GET {path}: kd-passport-1 is an Ed25519 OKP key",
        status == 200 and jwk is not None and jwk.get("kty") == "OKP" and jwk.get("crv") == "Ed25519" and bool(jwk.get("x")),
        body,
    )
    return Ed25519PublicKey.from_public_bytes(b64url_decode(jwk["x"])) if jwk else None


def register(key: Ed25519PrivateKey, name: str) -> dict[str, Any]:
    status, challenge = call("register_challenge", {})
    data = challenge.get("data", {}) if isinstance(challenge, dict) else {}
    check("REST register_challenge: 200 ok", status == 200 and challenge.get("ok") is True and "payload" in data, challenge)
    args = {
        "name": name,
        "platform": "python-cryptography",
        "public_key": public_b64url(key),
        "challenge_id": data.get("challenge_id"),
        "signature": sign_b64url(key, data.get("payload", "")),
    }
    status, registered = call("register_agent", args)
    check("REST register_agent: 200 ok", status == 200 and isinstance(registered, dict) and registered.get("ok") is True, registered)
    return registered.get("data", {}) if isinstance(registered, dict) else {}


def passport_checks(agent: dict[str, Any], key: Ed25519PrivateKey, server_key: Ed25519PublicKey | None) -> None:
    passport = agent.get("passport") or {}
    signed_text = passport.get("signed_text", "")
    lines = signed_text.split("\n")
    check(
        "passport: kd-passport-v1 text names the credential, agent, handle and our key",
        len(lines) == 6
        and lines[0] == "kd-passport-v1"
        and lines[1] == passport.get("credential_id")
        and lines[2] == agent.get("agent_id")
        and lines[3] == agent.get("handle")
        and lines[4] == public_b64url(key),
        passport,
    )
    check("passport: key_id kd-passport-1, alg EdDSA", passport.get("key_id") == "kd-passport-1" and passport.get("alg") == "EdDSA", passport)
    if server_key is None:
        check("passport: signature verifies with the JWKS key", False, "no JWKS key")
        return
    signature = b64url_decode(passport.get("signature", ""))
    try:
        server_key.verify(signature, signed_text.encode())
        good = True
    except InvalidSignature:
        good = False
    check("passport: signature verifies with the JWKS key (cryptography)", good, passport)
    try:
        server_key.verify(signature, (signed_text + "x").encode())
        tampered_rejected = False
    except InvalidSignature:
        tampered_rejected = True
    check("passport: a changed text does not verify", tampered_rejected)


# ---- 3 and 4. a signed write and every refusal ---------------------------------------------


def writes_and_refusals(key: Ed25519PrivateKey, agent_id: str) -> None:
    tool = "rename_agent"
    args = {"agent_id": agent_id, "name": f"Crypto café {secrets.token_hex(4)}"}
    headers = signed_headers(key, tool, agent_id, args)
    # The body is sent in another key order and spacing: the server canonicalises it itself.
    body = json.dumps({"name": args["name"], "agent_id": agent_id}, indent=2)
    status, reply = call(tool, args, headers, body=body)
    check(
        "signed rename_agent (non-ASCII name, non-canonical body): 200 ok",
        status == 200 and isinstance(reply, dict) and reply.get("ok") is True and reply["data"].get("name") == args["name"],
        (status, reply),
    )
    spent_nonce = headers["x-kd-nonce"]

    def refusal(label: str, expected_status: int, expected_code: str, headers: dict[str, str], args: dict[str, Any]) -> None:
        status, reply = call(tool, args, headers)
        check(
            f"refusal {label}: HTTP {expected_status} {expected_code}",
            status == expected_status and isinstance(reply, dict) and reply.get("ok") is False and error_code(reply) == expected_code,
            (status, reply),
        )

    next_args = {"agent_id": agent_id, "name": f"crypto-next-{secrets.token_hex(4)}"}
    refusal("no signature headers", 401, "signature_required", {}, next_args)
    refusal("timestamp 1000 s old", 401, "stale_signature", signed_headers(key, tool, agent_id, next_args, ts=int(time.time()) - 1000), next_args)
    refusal("timestamp 1000 s ahead", 401, "stale_signature", signed_headers(key, tool, agent_id, next_args, ts=int(time.time()) + 1000), next_args)
    refusal("nonce too short", 401, "bad_nonce", signed_headers(key, tool, agent_id, next_args, nonce="short"), next_args)
    refusal("nonce with a bad character", 401, "bad_nonce", signed_headers(key, tool, agent_id, next_args, nonce="n-0123456789abcdef!"), next_args)
    refusal("signed by another key", 401, "bad_signature", signed_headers(Ed25519PrivateKey.generate(), tool, agent_id, next_args), next_args)
    tampered = signed_headers(key, tool, agent_id, next_args)
    refusal("arguments changed after signing", 401, "bad_signature", tampered, {**next_args, "name": next_args["name"] + "x"})
    refusal("spent nonce", 401, "replay", signed_headers(key, tool, agent_id, next_args, nonce=spent_nonce), next_args)
    mismatch = signed_headers(key, tool, agent_id, next_args)
    mismatch["x-karmadue-agent"] = str(uuid.uuid4())
    refusal("x-karmadue-agent differs from agent_id", 403, "agent_mismatch", mismatch, next_args)

    # Nothing above was written: the name is still the signed one.
    status, verified = http("GET", f"/functions/v1/public-api/v1/verify/{agent_id}")
    data = verified.get("data", {}) if isinstance(verified, dict) else {}
    check("verify route: ok and passport_signature_valid", status == 200 and data.get("passport_signature_valid") is True, verified)
    status, history = call("get_history", {"agent_id": agent_id})
    events = json.dumps(history, ensure_ascii=False)
    check("refused calls wrote nothing (the next name never appears)", next_args["name"] not in events, (status, history))


# ---- 5. the MCP transport on raw HTTP --------------------------------------------------------


def mcp_raw(body: str, headers: dict[str, str] | None = None, method: str = "POST") -> tuple[int, dict[str, str], str]:
    request = urllib.request.Request(BASE + "/functions/v1/mcp", data=body.encode() if body else None, method=method)
    request.add_header("content-type", "application/json")
    request.add_header("accept", "application/json, text/event-stream")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read().decode()


def rpc_error(text: str) -> tuple[Any, Any]:
    try:
        message = json.loads(text)
    except ValueError:
        return None, text
    return (message.get("error") or {}).get("code"), message.get("id", "absent")


def transport_checks() -> None:
    status, _, text = mcp_raw('{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    check("MCP notification: 202, no body", status == 202 and text == "", (status, text))
    status, _, text = mcp_raw('{"jsonrpc": "2.0", "id": 5, "result": {}}')
    check("MCP client response message: 202, no body", status == 202 and text == "", (status, text))
    status, headers, text = mcp_raw('{"jsonrpc": "2.0", "id": "p-1", "method": "ping"}')
    check(
        "MCP ping (string id): 200 JSON, id echoed",
        status == 200 and headers.get("content-type", "").startswith("application/json") and json.loads(text) == {"jsonrpc": "2.0", "id": "p-1", "result": {}},
        (status, headers, text),
    )
    for label, body in (("null", '{"jsonrpc": "2.0", "id": null, "method": "ping"}'), ("object", '{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}')):
        status, _, text = mcp_raw(body)
        check(f"MCP request with a {label} id: 400 Invalid Request (-32600)", status == 400 and rpc_error(text) == (-32600, None), (status, text))
    status, _, text = mcp_raw('{"jsonrpc": "2.0", "id": 6, "method": "ping", "params": [1]}')
    check("MCP params as an array: 400 Invalid params (-32602)", status == 400 and rpc_error(text) == (-32602, 6), (status, text))
    status, _, text = mcp_raw('[{"jsonrpc": "2.0", "id": 7, "method": "ping"}]')
    check("MCP batch: 400 Invalid Request (-32600)", status == 400 and rpc_error(text)[0] == -32600, (status, text))
    status, _, text = mcp_raw('{"jsonrpc": "2.0", "id": 8, "method": "no/such"}')
    check("MCP unknown method (handshake era): -32601", rpc_error(text) == (-32601, 8), (status, text))
    status, headers, _ = mcp_raw("", method="GET")
    check("MCP GET: 405 with Allow: POST", status == 405 and headers.get("allow") == "POST", (status, headers))
    status, _, _ = mcp_raw('{"jsonrpc": "2.0", "id": 9, "method": "ping"}', {"Host": "evil.example.com"})
    check("MCP foreign Host: 403", status == 403, status)
    status, _, _ = mcp_raw('{"jsonrpc": "2.0", "id": 10, "method": "ping"}', {"Origin": "http://evil.example.com"})
    check("MCP foreign Origin: 403", status == 403, status)


def main() -> None:
    transport_checks()
    worked_example()
    server_key = jwks_key("/.well-known/jwks.json")
    copy = jwks_key("/functions/v1/public-api/.well-known/jwks.json")
    check(
        "both JWKS copies publish the same key",
        server_key is not None
        and copy is not None
        and server_key.public_bytes(Encoding.Raw, PublicFormat.Raw) == copy.public_bytes(Encoding.Raw, PublicFormat.Raw),
    )
    key = Ed25519PrivateKey.generate()
    agent = register(key, f"crypto-{secrets.token_hex(5)}")
    passport_checks(agent, key, server_key)
    agent_id = agent.get("agent_id")
    if isinstance(agent_id, str):
        writes_and_refusals(key, agent_id)
    else:
        check("registration gave an agent_id", False, agent)


if __name__ == "__main__":
    if not BASE:
        print("KD_HUB_URL is not set (e.g. http://127.0.0.1:8787)", file=sys.stderr)
        sys.exit(2)
    try:
        main()
    except Exception as error:  # any crash is a failure, reported in the summary
        check("ran without an unexpected error", False, f"{type(error).__name__}: {error}")
    sys.exit(checks.summary())
