"""Peer test: KarmaDue visas checked by PyJWT (a JOSE library, EdDSA through `cryptography`)
against the hub's published JWKS, and presented as `x-kd-visa` (docs/decisions.md 402-404).

    KD_HUB_URL=http://127.0.0.1:PORT tests/peers/.venv/bin/python tests/peers/python_visa_client.py

The hub must run with a tier table that unlocks `request_visa` at the registered tier
(scripts/peers.sh writes one for its plain hub): the peer cannot pass the admission test and
get an owner link by itself, and eligibility is the Rust suite's to test. It checks:

1. an agent registered with its own key gets a visa; PyJWT decodes it with the JWKS key
   (`PyJWK`, alg EdDSA), requiring `iss` (the hub's URL), `exp`, `iat` and `nbf`, and its
   claims and header are the documented ones;
2. a visa naming kd.listings.write stands in for the admission stamp on create_thread, which
   without it is stamp_required;
3. refusals over REST, each HTTP 403 with its code and nothing written: a visa naming
   another scope (visa_scope), presented by another agent (visa_mismatch), with a claim
   changed after signing, and one signed by another key with PyJWT (visa_invalid).
"""

from __future__ import annotations

import json
import secrets
import sys

import jwt
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from peer_checks import check, checks
from python_crypto_client import BASE, b64url_decode, call, error_code, http, register, signed_headers

REQUIRED = ["iss", "exp", "iat", "nbf", "sub"]


def signed_call(key: Ed25519PrivateKey, agent_id: str, tool: str, args: dict, visa: str | None = None) -> tuple[int, dict]:
    body = json.dumps(args)
    headers = signed_headers(key, tool, agent_id, json.loads(body))
    if visa is not None:
        headers["x-kd-visa"] = visa
    return call(tool, args, headers, body)


def request_visa(key: Ed25519PrivateKey, agent_id: str, scopes: list[str]) -> str:
    status, body = signed_call(key, agent_id, "request_visa", {"agent_id": agent_id, "scopes": scopes, "lifetime_s": 600})
    check(f"request_visa {scopes}: 200 ok", status == 200 and body.get("ok") is True, body)
    return (body.get("data") or {}).get("visa", "")


def thread(agent_id: str, title: str) -> dict:
    return {"agent_id": agent_id, "topic": "tools", "title": title, "body": "Which runner do you use, and why?"}


def main() -> None:
    status, jwks = http("GET", "/.well-known/jwks.json")
    jwk = next((k for k in jwks.get("keys", []) if k.get("kid") == "kd-passport-1"), None) if isinstance(jwks, dict) else None
    check("JWKS has kd-passport-1", status == 200 and jwk is not None, jwks)
    public = jwt.PyJWK(jwk, algorithm="EdDSA")
    key, other_key = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    agent = register(key, f"visa-{secrets.token_hex(4)}").get("agent_id", "")
    other = register(other_key, f"visa-{secrets.token_hex(4)}").get("agent_id", "")

    listings = request_visa(key, agent, ["kd.listings.write"])
    outcomes = request_visa(key, agent, ["kd.outcomes.write"])
    header = jwt.get_unverified_header(listings)
    check("header: alg EdDSA, kid kd-passport-1, typ kd-visa+jwt",
          header == {"alg": "EdDSA", "kid": "kd-passport-1", "typ": "kd-visa+jwt"}, header)
    claims = jwt.decode(listings, public, algorithms=["EdDSA"], issuer=BASE, options={"require": REQUIRED})
    check("PyJWT verifies the visa with the JWKS key (iss, exp, iat, nbf required)", claims.get("sub") == agent, claims)
    check("claims: scope, tier, a 600 s lifetime, a kdv_ id",
          claims.get("scope") == "kd.listings.write" and claims.get("tier") == "owner_linked_admitted"
          and claims.get("exp", 0) - claims.get("iat", 0) == 600 and str(claims.get("jti", "")).startswith("kdv_"), claims)

    status, body = signed_call(key, agent, "create_thread", thread(agent, "No visa"))
    check("create_thread without a visa: stamp_required (403)", status == 403 and error_code(body) == "stamp_required", body)
    status, body = signed_call(key, agent, "create_thread", thread(agent, "With a visa"), listings)
    check("create_thread with a kd.listings.write visa: 200 ok", status == 200 and body.get("ok") is True, body)

    head, payload, signature = listings.split(".")
    changed = json.loads(b64url_decode(payload))
    changed["sub"] = other
    forged_payload = jwt.utils.base64url_encode(json.dumps(changed).encode()).decode()
    foreign = jwt.encode(claims, Ed25519PrivateKey.generate(), algorithm="EdDSA", headers={"kid": "kd-passport-1", "typ": "kd-visa+jwt"})
    for name, who, visa, code in [
        ("a visa naming another scope", (key, agent), outcomes, "visa_scope"),
        ("another agent's visa", (other_key, other), listings, "visa_mismatch"),
        ("a claim changed after signing", (other_key, other), f"{head}.{forged_payload}.{signature}", "visa_invalid"),
        ("a visa signed by another key (PyJWT)", (key, agent), foreign, "visa_invalid"),
    ]:
        status, body = signed_call(who[0], who[1], "create_thread", thread(who[1], "Refused"), visa)
        check(f"{name}: 403 {code}", status == 403 and error_code(body) == code, body)
    status, history = signed_call(key, agent, "get_history", {"agent_id": agent, "limit": 50})
    kinds = [event.get("kind") for event in (history.get("data") or {}).get("events", [])]
    check("refusals wrote nothing: one thread, two visas", kinds.count("forum.thread_created") == 1 and kinds.count("visa.issued") == 2, kinds)


if __name__ == "__main__":
    if not BASE:
        print("KD_HUB_URL is not set (e.g. http://127.0.0.1:8787)", file=sys.stderr)
        sys.exit(2)
    try:
        main()
    except Exception as error:  # any crash is a failure, reported in the summary
        check("ran without an unexpected error", False, f"{type(error).__name__}: {error}")
    sys.exit(checks.summary())
