#!/usr/bin/env python3
"""Verify KarmaDue's signed daily log heads (kd-log-head-v1).

    python3 scripts/verify_head.py --jwks URL_OR_FILE [--live URL_OR_FILE] [PATH ...]

PATH is a head file (heads/YYYY-MM-DD.json) or a folder holding them; without one, the
`heads` folder beside this script's folder (the ledger repository's layout) is read.

For every head file, in date order, it checks that:
  - the file is named after the head's date;
  - signed_text is exactly "kd-log-head-v1", date, seq and row_hash joined by LF (rebuilt from
    the fields, compared byte for byte);
  - the signature (Ed25519, base64url) verifies over signed_text's UTF-8 bytes with the key the
    JWKS publishes under key_id (kd-passport-1);
  - seq never goes down from one day to the next.

With --live (the hub's /.well-known/kd-log-head.json) it checks the live head and each anchor
in its `previous` list the same way, that a file holds the live head's day ("today's file
matches the live head"), and that every file for a day the live head lists holds the same seq,
row_hash and signature.

Prints each problem on its own line, then a summary. Exits 0 when everything verifies, 1 when
something does not, 2 when the input cannot be read. Needs Python 3.9+ and `cryptography`.
Ships with the KarmaDue hub; the hub copies it into its ledger folder as scripts/verify_head.py.
"""

from __future__ import annotations

import argparse
import base64
import json
import pathlib
import re
import sys
import urllib.request
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

RECIPE = "kd-log-head-v1"
DAY = re.compile(r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$")
HASH = re.compile(r"^[0-9a-f]{64}$")


class Unreadable(Exception):
    """An input that cannot be read or parsed (exit status 2)."""


def load_json(source: str) -> Any:
    """Reads JSON from an http(s) URL or a file."""
    try:
        if source.startswith(("http://", "https://")):
            request = urllib.request.Request(source, headers={"accept": "application/json"})
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.load(response)
        return json.loads(pathlib.Path(source).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise Unreadable(f"{source}: {error}") from error


def b64url_decode(text: str) -> bytes:
    if not isinstance(text, str) or not re.fullmatch(r"[A-Za-z0-9_-]*={0,2}", text):
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def load_keys(jwks: Any) -> dict[str, Ed25519PublicKey]:
    keys: dict[str, Ed25519PublicKey] = {}
    for jwk in (jwks or {}).get("keys", []) if isinstance(jwks, dict) else []:
        if jwk.get("kty") == "OKP" and jwk.get("crv") == "Ed25519" and isinstance(jwk.get("kid"), str):
            try:
                raw = b64url_decode(jwk.get("x", ""))
                if len(raw) == 32:
                    keys[jwk["kid"]] = Ed25519PublicKey.from_public_bytes(raw)
            except ValueError:
                pass
    if not keys:
        raise Unreadable("the JWKS holds no Ed25519 key")
    return keys


def head_problems(head: Any, keys: dict[str, Ed25519PublicKey]) -> list[str]:
    """What is wrong with one head object (an empty list when it verifies)."""
    if not isinstance(head, dict):
        return ["not a JSON object"]
    date, seq, row_hash = head.get("date"), head.get("seq"), head.get("row_hash")
    problems = []
    if head.get("recipe", RECIPE) != RECIPE:
        problems.append(f"recipe is {head.get('recipe')!r}, not {RECIPE}")
    if not isinstance(date, str) or not DAY.match(date):
        problems.append(f"date {date!r} is not YYYY-MM-DD")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
        problems.append(f"seq {seq!r} is not a whole number")
    if not isinstance(row_hash, str) or not HASH.match(row_hash):
        problems.append(f"row_hash {row_hash!r} is not 64 lowercase hex digits")
    if problems:
        return problems
    expected = f"{RECIPE}\n{date}\n{seq}\n{row_hash}"
    if head.get("signed_text") != expected:
        return ["signed_text is not the kd-log-head-v1 text rebuilt from date, seq and row_hash"]
    key = keys.get(head.get("key_id"))
    if key is None:
        return [f"no key {head.get('key_id')!r} in the JWKS"]
    try:
        key.verify(b64url_decode(head.get("signature", "")), expected.encode("utf-8"))
    except (InvalidSignature, ValueError):
        return ["the signature does not verify"]
    return []


def head_files(paths: list[str]) -> list[pathlib.Path]:
    files: list[pathlib.Path] = []
    for path in map(pathlib.Path, paths):
        if path.is_dir():
            files.extend(sorted(path.glob("*.json")))
        elif path.is_file():
            files.append(path)
        else:
            raise Unreadable(f"{path}: no such file or folder")
    return files


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jwks", required=True, help="the hub's /.well-known/jwks.json (URL or file)")
    parser.add_argument("--live", help="the hub's /.well-known/kd-log-head.json (URL or file)")
    parser.add_argument("paths", nargs="*", help="head files or folders (default: ../heads)")
    args = parser.parse_args(argv)
    paths = args.paths or [str(pathlib.Path(__file__).resolve().parent.parent / "heads")]
    try:
        keys = load_keys(load_json(args.jwks))
        files = head_files(paths)
        heads = [(path, load_json(str(path))) for path in files]
        live = load_json(args.live) if args.live else None
    except Unreadable as error:
        print(f"cannot read: {error}")
        return 2

    problems: list[str] = []
    if not heads:
        problems.append(f"no head files in {', '.join(paths)}")
    by_day: dict[str, dict] = {}
    for path, head in heads:
        found = head_problems(head, keys)
        problems.extend(f"{path}: {problem}" for problem in found)
        if not found:
            if path.stem != head["date"]:
                problems.append(f"{path}: the file is not named after its date {head['date']}")
            by_day[head["date"]] = head
    last_day, last_seq = None, -1
    for day in sorted(by_day):
        seq = by_day[day]["seq"]
        if seq < last_seq:
            problems.append(f"seq goes down: {last_day} has {last_seq}, {day} has {seq}")
        last_day, last_seq = day, seq

    if live is not None:
        anchors = [("live head", live)]
        previous = live.get("previous") if isinstance(live, dict) else None
        if not isinstance(previous, list):
            problems.append("live head: previous is not a list")
            previous = []
        anchors += [(f"live head previous[{index}]", anchor) for index, anchor in enumerate(previous)]
        for name, anchor in anchors:
            found = head_problems(anchor, keys)
            problems.extend(f"{name}: {problem}" for problem in found)
            if found:
                continue
            stored = by_day.get(anchor["date"])
            if stored is None:
                if name == "live head":
                    problems.append(f"live head: no file holds its day {anchor['date']}")
                continue
            for field in ("seq", "row_hash", "signature"):
                if stored[field] != anchor[field]:
                    problems.append(f"{name}: the file of {anchor['date']} has another {field}")

    for problem in problems:
        print(problem)
    if problems:
        print(f"FAILED: {len(problems)} problem(s) in {len(heads)} head file(s)")
        return 1
    latest = max(by_day) if by_day else None
    summary = f"ok: {len(heads)} head file(s) verified"
    if latest:
        summary += f"; latest {latest} seq {by_day[latest]['seq']}"
    if live is not None:
        summary += "; the live head matches"
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
