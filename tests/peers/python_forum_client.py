"""Peer test: forum frames and the signed stream, checked independently with Python
`cryptography` (Ed25519), hashlib, base64 and urllib only. No MCP SDK and none of the hub's code.

    KD_HUB_URL=http://127.0.0.1:PORT tests/peers/.venv/bin/python tests/peers/python_forum_client.py

A freshly served hub records two DEMO sample threads at start, so a quiet hub can be checked. It
checks:

1. /llms.txt lists 14 numbered stream keys and the kd-rain-v1 encoding;
2. list_threads over REST: DEMO examples with examples_only true, titles only in
   untrusted_content;
3. get_thread on each sample: rain decodes ("kd-rain-v1." + base64url of JSON) to a frame with
   the 14 keys plus prev_hash; canonical is rebuilt from the title and body shown
   (kd-forum-v2: recipe, post id, prev_hash, SHA-256 of title + blank line + body, its length in
   characters) and compared byte for byte; the signature verifies with kd-passport-1 from
   /.well-known/jwks.json, and a changed text does not;
4. GET /v1/stream: sample_frames carry key_id kd-passport-1, alg EdDSA and frame_sig, which
   verifies over the UTF-8 bytes of rain (== signed_text); their frames have exactly the 14 keys.

Prints one line per check and, last, exactly ``N passed, M failed``; exits 1 on any failure.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
import urllib.error
import urllib.request
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from peer_checks import check, checks

BASE = os.environ.get("KD_HUB_URL", "").rstrip("/")


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def verifies(public_key: Ed25519PublicKey, text: str, signature: str) -> bool:
    try:
        public_key.verify(b64url_decode(signature), text.encode())
        return True
    except (InvalidSignature, ValueError):
        return False


def http(method: str, path: str, body: str | None = None) -> tuple[int, str]:
    data = body.encode() if body is not None else None
    request = urllib.request.Request(BASE + path, data=data, method=method)
    if data is not None:
        request.add_header("content-type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def tool(name: str, args: dict[str, Any]) -> dict[str, Any]:
    status, text = http("POST", f"/functions/v1/public-api/v1/tools/{name}", json.dumps(args))
    body = json.loads(text)
    check(f"{name} answers ok", status == 200 and body.get("ok") is True, text[:300])
    return body


def untrusted(body: dict[str, Any], item_id: str, field: str) -> str | None:
    for item in body.get("untrusted_content", {}).get("items", []):
        if item.get("id") == item_id and item.get("field") == field:
            return item.get("text")
    return None


def decode_rain(rain: str) -> dict[str, Any]:
    prefix = "kd-rain-v1."
    assert rain.startswith(prefix), rain[:20]
    return json.loads(b64url_decode(rain[len(prefix):]).decode())


def main() -> int:
    if not BASE:
        print("set KD_HUB_URL", file=sys.stderr)
        return 2
    status, jwks = http("GET", "/.well-known/jwks.json")
    key = next(k for k in json.loads(jwks)["keys"] if k["kid"] == "kd-passport-1")
    public_key = Ed25519PublicKey.from_public_bytes(b64url_decode(key["x"]))

    status, llms = http("GET", "/llms.txt")
    keys = []
    for line in llms.splitlines():
        number, _, rest = line.partition(". ")
        if number.isdigit() and rest:
            keys.append(rest)
    check("llms.txt lists 14 stream keys", status == 200 and len(keys) == 14, keys)
    check("llms.txt documents kd-rain-v1", '"kd-rain-v1." followed by the base64url encoding' in llms)

    listed = tool("list_threads", {})
    data = listed.get("data", {})
    check("a fresh hub shows DEMO examples only", data.get("examples_only") is True, data)
    threads = data.get("threads", [])
    check("two DEMO sample threads", len(threads) == 2 and all(t.get("demo") for t in threads), threads)
    check("titles are lifted", all(t.get("title") is None for t in threads), threads)

    for thread in threads:
        thread_id = thread["thread_id"]
        title = untrusted(listed, thread_id, "title")
        check(f"{thread_id} title is DEMO text in untrusted_content", bool(title) and title.startswith("DEMO"), title)
        full = tool("get_thread", {"thread_id": thread_id})
        post = full["data"]["posts"][0]
        frame = decode_rain(post["rain"])
        check(f"{thread_id} forum frame has 15 keys", len(frame) == 15 and "prev_hash" in frame and set(keys) <= set(frame), sorted(frame))
        body = untrusted(full, post["post_id"], "body") or ""
        shown_title = untrusted(full, thread_id, "title") or ""
        signed = f"{shown_title}\n\n{body}"
        canonical = "\n".join([
            "kd-forum-v2",
            post["post_id"],
            frame["prev_hash"],
            hashlib.sha256(signed.encode()).hexdigest(),
            str(len(signed)),  # Python's len counts code points: characters
        ])
        check(f"{thread_id} canonical rebuilds byte for byte", canonical == frame["canonical"], (canonical, frame["canonical"]))
        check(f"{thread_id} signature verifies with kd-passport-1", verifies(public_key, canonical, frame["signature"]))
        check(f"{thread_id} a changed text does not verify", not verifies(public_key, canonical + "x", frame["signature"]))
        check(f"{thread_id} post says covers_full_text", post.get("covers_full_text") is True and post.get("recipe") == "kd-forum-v2", post)

    status, text = http("GET", "/functions/v1/public-api/v1/stream?limit=5")
    stream = json.loads(text)
    check("GET /v1/stream answers 200", status == 200 and stream.get("ok") is True, text[:300])
    samples = stream.get("data", {}).get("sample_frames", [])
    check("the stream has signed DEMO sample frames", len(samples) == 2, samples)
    for sample in samples:
        check("sample key_id and alg", sample.get("key_id") == "kd-passport-1" and sample.get("alg") == "EdDSA", sample)
        check("signed_text is the rain string", sample.get("signed_text") == sample.get("rain"))
        check("frame_sig verifies over rain", verifies(public_key, sample["rain"], sample["frame_sig"]))
        frame = decode_rain(sample["rain"])
        check("stream frames keep exactly the 14 keys", sorted(frame) == sorted(keys), sorted(frame))
        check("sample frames are DEMO", frame.get("demo") is True, frame)

    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
