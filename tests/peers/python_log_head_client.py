"""Peer test: the signed daily log head, checked independently with Python `cryptography` and
urllib, and the shipped verifier (scripts/verify_head.py) run as an operator would run it.

    KD_HUB_URL=http://127.0.0.1:PORT KD_LEDGER_DIR=<the hub's ledger folder> \\
        tests/peers/.venv/bin/python tests/peers/python_log_head_client.py

The hub must have published its head (it does at start when its log has events, e.g. after
loading the bundled catalog). It checks:

1. GET /.well-known/kd-log-head.json and the public-api copy: the same document; signed_text is
   rebuilt from date, seq and row_hash (kd-log-head-v1, joined by LF) and the Ed25519 signature
   verifies with kd-passport-1 from /.well-known/jwks.json; a changed text does not verify;
   the date is today's UTC day; previous is a list;
2. the hub's ledger folder: heads/<date>.json holds the live head; the folder carries the
   verifier, byte for byte the one in this repository;
3. scripts/verify_head.py from the ledger folder, with --jwks and --live over HTTP: exit 0;
4. the verifier refuses (exit 1, naming the problem): a copy whose seq was changed, a copy
   filed under another day, a JWKS holding another key, and an empty folder;
5. the verifier against heads this script signs with a key of its own (so it can write what a
   broken or dishonest ledger would hold): two different heads for one day, seq going down, a
   head dated after today, a stale live head, `previous` out of order or missing a file, and
   inputs it cannot read (exit 2 with a message, never a traceback).

Prints one line per check and, last, exactly ``N passed, M failed``; exits 1 on any failure.
"""

from __future__ import annotations

import base64
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from datetime import datetime, timedelta, timezone
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from peer_checks import check, checks

BASE = os.environ.get("KD_HUB_URL", "").rstrip("/")
LEDGER = pathlib.Path(os.environ.get("KD_LEDGER_DIR", ""))
REPO_VERIFIER = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "verify_head.py"


def get_json(path: str) -> Any:
    with urllib.request.urlopen(BASE + path, timeout=10) as response:
        return json.load(response)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def verifies(key: Ed25519PublicKey, text: str, signature: str) -> bool:
    try:
        key.verify(unb64url(signature), text.encode("utf-8"))
        return True
    except InvalidSignature:
        return False


def run_verifier(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(LEDGER / "scripts" / "verify_head.py"), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def main() -> int:
    if not BASE or not LEDGER.is_dir():
        print("KD_HUB_URL and KD_LEDGER_DIR (an existing folder) are required")
        print("0 passed, 1 failed")
        return 1
    jwks_url = BASE + "/.well-known/jwks.json"
    live_url = BASE + "/.well-known/kd-log-head.json"

    # 1. The live head, verified here.
    live = get_json("/.well-known/kd-log-head.json")
    copy = get_json("/functions/v1/public-api/.well-known/kd-log-head.json")
    check("the public-api copy is the same head", live == copy, (live, copy))
    jwk = next(k for k in get_json("/.well-known/jwks.json")["keys"] if k["kid"] == "kd-passport-1")
    key = Ed25519PublicKey.from_public_bytes(unb64url(jwk["x"]))
    text = f"kd-log-head-v1\n{live['date']}\n{live['seq']}\n{live['row_hash']}"
    check("signed_text is rebuilt byte for byte from date, seq and row_hash", live["signed_text"] == text, live)
    check("the signature verifies with kd-passport-1", verifies(key, text, live["signature"]), live)
    check(
        "a changed text does not verify",
        not verifies(key, text.replace(f"\n{live['seq']}\n", f"\n{live['seq'] + 1}\n"), live["signature"]),
    )
    today = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    check("the head is today's (UTC)", live["date"] == today, (live["date"], today))
    check("seq is a positive whole number", isinstance(live["seq"], int) and live["seq"] > 0, live["seq"])
    check("previous is a list", isinstance(live.get("previous"), list), live.get("previous"))
    check("key_id and alg", (live["key_id"], live["alg"]) == ("kd-passport-1", "EdDSA"), live)

    # 2. The ledger folder the hub wrote.
    day_file = LEDGER / "heads" / f"{live['date']}.json"
    stored = json.loads(day_file.read_text()) if day_file.exists() else {}
    check(
        "the day's file holds the live head",
        all(stored.get(field) == live[field] for field in ("date", "seq", "row_hash", "signed_text", "signature")),
        stored,
    )
    shipped = LEDGER / "scripts" / "verify_head.py"
    check(
        "the ledger folder carries this repository's verifier",
        shipped.exists() and shipped.read_bytes() == REPO_VERIFIER.read_bytes(),
        str(shipped),
    )

    # 3. The shipped verifier, as an operator runs it (default folder: ../heads).
    sound = run_verifier("--jwks", jwks_url, "--live", live_url)
    check(
        "verify_head.py passes the hub's ledger and live head",
        sound.returncode == 0 and "the live head matches" in sound.stdout,
        (sound.returncode, sound.stdout, sound.stderr),
    )

    # 4. What it must refuse.
    with tempfile.TemporaryDirectory() as work:
        work_path = pathlib.Path(work)
        tampered = work_path / "tampered"
        tampered.mkdir()
        edited = dict(stored, seq=stored.get("seq", 0) + 1)
        edited["signed_text"] = f"kd-log-head-v1\n{edited['date']}\n{edited['seq']}\n{edited['row_hash']}"
        (tampered / day_file.name).write_text(json.dumps(edited))
        result = run_verifier("--jwks", jwks_url, str(tampered))
        check(
            "a head whose seq was changed fails",
            result.returncode == 1 and "the signature does not verify" in result.stdout,
            (result.returncode, result.stdout),
        )
        misfiled = work_path / "misfiled"
        misfiled.mkdir()
        shutil.copy(day_file, misfiled / "2001-01-01.json")
        result = run_verifier("--jwks", jwks_url, str(misfiled))
        check(
            "a head filed under another day fails",
            result.returncode == 1 and "not named after its date" in result.stdout,
            (result.returncode, result.stdout),
        )
        other = Ed25519PrivateKey.generate().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        other_jwks = work_path / "other-jwks.json"
        other_jwks.write_text(json.dumps({"keys": [{"kty": "OKP", "crv": "Ed25519", "kid": "kd-passport-1", "x": b64url(other)}]}))
        result = run_verifier("--jwks", str(other_jwks), str(LEDGER / "heads"))
        check(
            "another key's JWKS fails",
            result.returncode == 1 and "the signature does not verify" in result.stdout,
            (result.returncode, result.stdout),
        )
        empty = work_path / "empty"
        empty.mkdir()
        result = run_verifier("--jwks", jwks_url, str(empty))
        check("an empty folder fails", result.returncode == 1 and "no head files" in result.stdout, (result.returncode, result.stdout))

    own_key_checks()
    return checks.summary()


def own_key_checks() -> None:
    """The verifier's refusals, on heads signed here with a throwaway kd-passport-1."""
    secret = Ed25519PrivateKey.generate()
    public = secret.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    today = datetime.now(timezone.utc).date()

    def day(offset: int) -> str:
        return (today + timedelta(days=offset)).isoformat()

    def head(date: str, seq: int, row_hash: str = "ab" * 32) -> dict:
        text = f"kd-log-head-v1\n{date}\n{seq}\n{row_hash}"
        return {
            "recipe": "kd-log-head-v1", "date": date, "seq": seq, "row_hash": row_hash,
            "signed_text": text, "signature": b64url(secret.sign(text.encode())),
            "key_id": "kd-passport-1", "alg": "EdDSA", "published_at": f"{date}T00:00:01.000Z",
        }

    with tempfile.TemporaryDirectory() as work:
        root = pathlib.Path(work)
        jwks = root / "jwks.json"
        jwks.write_text(json.dumps({"keys": [{"kty": "OKP", "crv": "Ed25519", "kid": "kd-passport-1", "x": b64url(public)}]}))

        def folder(name: str, heads: list[dict]) -> str:
            path = root / name
            path.mkdir()
            for item in heads:
                (path / f"{item['date']}.json").write_text(json.dumps(item))
            return str(path)

        def live_file(current: dict, previous: list[dict]) -> str:
            path = root / f"live-{len(list(root.iterdir()))}.json"
            path.write_text(json.dumps(dict(current, previous=previous)))
            return str(path)

        def expect(name: str, args: list[str], status: int, text: str) -> None:
            result = run_verifier("--jwks", str(jwks), *args)
            check(name, result.returncode == status and text in result.stdout and "Traceback" not in result.stderr,
                  (result.returncode, result.stdout, result.stderr[-300:]))

        good = [head(day(-2), 5), head(day(-1), 9), head(day(0), 12)]
        good_dir = folder("good", good)
        expect("own key: a sound ledger and live head pass", ["--live", live_file(good[2], [good[1], good[0]]), good_dir],
               0, "the live head matches")
        twice = folder("twice", [head(day(-1), 9)])
        (pathlib.Path(twice) / "copy").mkdir()
        (pathlib.Path(twice) / "copy" / f"{day(-1)}.json").write_text(json.dumps(head(day(-1), 12)))
        expect("own key: two different heads for one day fail", [twice, str(pathlib.Path(twice) / "copy")],
               1, "a different head for")
        expect("own key: seq going down fails", [folder("down", [head(day(-2), 9), head(day(-1), 5)])], 1, "seq goes down")
        expect("own key: a head dated after today fails", [folder("future", [head(day(3), 9)])], 1, "after today")
        expect("own key: a stale live head fails", ["--live", live_file(good[0], []), good_dir], 1, "not today")
        expect("own key: previous out of order fails",
               ["--live", live_file(good[2], [good[0], good[1]]), good_dir], 1, "runs back in time")
        partial = folder("partial", [good[2]])
        expect("own key: a previous day without a file fails", ["--live", live_file(good[2], [good[1]]), partial],
               1, "no file holds its day")
        expect("own key: a date that is no calendar day fails",
               [folder("calendar", [dict(head(day(-1), 1), date="2026-02-31")])], 1, "not a calendar day")
        bad_jwks = root / "bad-jwks.json"
        bad_jwks.write_text(json.dumps({"keys": 5}))
        result = run_verifier("--jwks", str(bad_jwks), good_dir)
        check("own key: a malformed JWKS is unreadable (exit 2), no traceback",
              result.returncode == 2 and "Traceback" not in result.stderr, (result.returncode, result.stdout, result.stderr[-300:]))
        deep = root / "deep"
        deep.mkdir()
        (deep / f"{day(0)}.json").write_text("[" * 100000 + "]" * 100000)
        result = run_verifier("--jwks", str(jwks), str(deep))
        check("own key: deeply nested JSON is unreadable (exit 2), no traceback",
              result.returncode == 2 and "Traceback" not in result.stderr, (result.returncode, result.stdout, result.stderr[-300:]))


if __name__ == "__main__":
    sys.exit(main())
