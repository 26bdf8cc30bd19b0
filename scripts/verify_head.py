#!/usr/bin/env python3
"""Verify KarmaDue's signed daily log heads (kd-log-head-v1).

    python3 scripts/verify_head.py --jwks URL_OR_FILE [--live URL_OR_FILE] [PATH ...]

PATH is a head file (heads/YYYY-MM-DD.json) or a folder holding them; without one, the
`heads` folder beside this script's folder (the ledger repository's layout) is read.

For every head file, in date order, it checks that:
  - the file is named after the head's date, a real calendar day not after today (UTC);
  - signed_text is exactly "kd-log-head-v1", date, seq and row_hash joined by LF (rebuilt from
    the fields, compared byte for byte);
  - the signature (Ed25519, base64url) verifies over signed_text's UTF-8 bytes with the
    kd-passport-1 key of the JWKS;
  - no day has two different heads, and seq never goes down from one day to the next.

With --live (the hub's /.well-known/kd-log-head.json) it also checks that the live head and
each anchor in its `previous` list verify the same way; that the live head is today's (or, in
the first hour of a UTC day, yesterday's) and newer than every file; that `previous` runs back
in time with seq never rising; and that a file holds each of those days with the same seq,
row_hash and signature ("today's file matches the live head").

Prints each problem on its own line, then a summary. Exits 0 when everything verifies, 1 when
something does not, 2 when the input cannot be read. Needs Python 3.9+ and `cryptography`.
Ships with the KarmaDue hub; the hub copies it into its ledger folder as scripts/verify_head.py.
"""

from __future__ import annotations

import argparse
import base64
import datetime
import json
import pathlib
import re
import sys
import urllib.request
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

RECIPE = "kd-log-head-v1"
KEY_ID = "kd-passport-1"
DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
HASH = re.compile(r"[0-9a-f]{64}")


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
    except (OSError, ValueError, RecursionError) as error:
        raise Unreadable(f"{source}: {type(error).__name__}: {error}") from error


def b64url_decode(text: str) -> bytes:
    if not isinstance(text, str) or not re.fullmatch(r"[A-Za-z0-9_-]*={0,2}", text):
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def load_key(jwks: Any) -> Ed25519PublicKey:
    """The kd-passport-1 Ed25519 key of a JWKS document."""
    listed = jwks.get("keys") if isinstance(jwks, dict) else None
    for jwk in listed if isinstance(listed, list) else []:
        if not isinstance(jwk, dict) or jwk.get("kid") != KEY_ID:
            continue
        if jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519":
            raise Unreadable(f"the JWKS key {KEY_ID} is not an Ed25519 (OKP) key")
        try:
            raw = b64url_decode(jwk.get("x"))
        except ValueError:
            raw = b""
        if len(raw) != 32:
            raise Unreadable(f"the JWKS key {KEY_ID} has no 32-byte x")
        return Ed25519PublicKey.from_public_bytes(raw)
    raise Unreadable(f"the JWKS has no key {KEY_ID}")


def calendar_day(text: str) -> datetime.date | None:
    if not DAY.fullmatch(text):
        return None
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        return None


def head_problems(head: Any, key: Ed25519PublicKey, today: datetime.date) -> list[str]:
    """What is wrong with one head object (an empty list when it verifies)."""
    if not isinstance(head, dict):
        return ["not a JSON object"]
    date, seq, row_hash = head.get("date"), head.get("seq"), head.get("row_hash")
    problems = []
    if head.get("recipe", RECIPE) != RECIPE:
        problems.append(f"recipe is {head.get('recipe')!r}, not {RECIPE}")
    day = calendar_day(date) if isinstance(date, str) else None
    if day is None:
        problems.append(f"date {date!r} is not a calendar day written YYYY-MM-DD")
    elif day > today:
        problems.append(f"date {date} is after today ({today.isoformat()}, UTC): is the hub's clock right?")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
        problems.append(f"seq {seq!r} is not a whole number")
    if not isinstance(row_hash, str) or not HASH.fullmatch(row_hash):
        problems.append(f"row_hash {row_hash!r} is not 64 lowercase hex digits")
    if head.get("key_id") != KEY_ID:
        problems.append(f"key_id is {head.get('key_id')!r}, not {KEY_ID}")
    if problems:
        return problems
    expected = f"{RECIPE}\n{date}\n{seq}\n{row_hash}"
    if head.get("signed_text") != expected:
        return ["signed_text is not the kd-log-head-v1 text rebuilt from date, seq and row_hash"]
    try:
        key.verify(b64url_decode(head.get("signature")), expected.encode("utf-8"))
    except (InvalidSignature, ValueError):
        return ["the signature does not verify"]
    return []


def live_problems(live: Any, key: Ed25519PublicKey, today: datetime.date, by_day: dict[str, dict]) -> list[str]:
    """What is wrong with the live head against the files (an empty list when it matches)."""
    previous = live.get("previous") if isinstance(live, dict) else None
    if not isinstance(previous, list):
        return ["live head: not a JSON object with a previous list"]
    problems: list[str] = []
    anchors = [("live head", live)] + [(f"live head previous[{index}]", anchor) for index, anchor in enumerate(previous)]
    later = None  # the anchor just checked (the next day in time)
    for name, anchor in anchors:
        found = head_problems(anchor, key, today)
        problems.extend(f"{name}: {problem}" for problem in found)
        if found:
            later = None
            continue
        if later is not None:
            if anchor["date"] >= later["date"]:
                problems.append(f"{name}: {anchor['date']} is not before {later['date']} (previous runs back in time)")
            if anchor["seq"] > later["seq"]:
                problems.append(f"{name}: seq {anchor['seq']} on {anchor['date']} is above {later['seq']} on {later['date']}")
        later = anchor
        stored = by_day.get(anchor["date"])
        if stored is None:
            problems.append(f"{name}: no file holds its day {anchor['date']}")
            continue
        for field in ("seq", "row_hash", "signature"):
            if stored[field] != anchor[field]:
                problems.append(f"{name}: the file of {anchor['date']} has another {field}")
    if not head_problems(live, key, today):
        day = datetime.date.fromisoformat(live["date"])
        hour = datetime.datetime.now(datetime.timezone.utc).hour
        if day != today and not (day == today - datetime.timedelta(days=1) and hour == 0):
            problems.append(f"live head: dated {live['date']}, not today ({today.isoformat()}, UTC)")
        newer = [day for day in by_day if day > live["date"]]
        if newer:
            problems.append(f"live head: files hold later days than the live head ({', '.join(sorted(newer))})")
    return problems


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
    today = datetime.datetime.now(datetime.timezone.utc).date()
    try:
        key = load_key(load_json(args.jwks))
        files = head_files(paths)
        heads = [(path, load_json(str(path))) for path in files]
        live = load_json(args.live) if args.live else None
    except Unreadable as error:
        print(f"cannot read: {error}")
        return 2
    except RecursionError:
        print("cannot read: an input is nested too deeply")
        return 2

    problems: list[str] = []
    if not heads:
        problems.append(f"no head files in {', '.join(paths)}")
    by_day: dict[str, dict] = {}
    for path, head in heads:
        found = head_problems(head, key, today)
        problems.extend(f"{path}: {problem}" for problem in found)
        if found:
            continue
        if path.stem != head["date"]:
            problems.append(f"{path}: the file is not named after its date {head['date']}")
        seen = by_day.get(head["date"])
        if seen is not None and any(seen[field] != head[field] for field in ("seq", "row_hash", "signature")):
            problems.append(f"{path}: another file holds a different head for {head['date']}")
        by_day.setdefault(head["date"], head)
    last_day, last_seq = None, -1
    for day in sorted(by_day):
        seq = by_day[day]["seq"]
        if seq < last_seq:
            problems.append(f"seq goes down: {last_day} has {last_seq}, {day} has {seq}")
        last_day, last_seq = day, seq

    if live is not None:
        problems.extend(live_problems(live, key, today, by_day))

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
