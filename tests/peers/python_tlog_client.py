"""Peer test: the hub's transparency log checked by an independent verifier, written from
RFC 6962 / RFC 9162 and the C2SP specs (tlog-checkpoint, signed-note, tlog-tiles) with the
Python standard library and `cryptography` (Ed25519) only. None of the hub's code (the
kd-mcp-v1 signing and the pass/fail count are python_receipts_client.py's).

    KD_HUB_URL=http://127.0.0.1:PORT tests/peers/.venv/bin/python tests/peers/python_tlog_client.py

It checks, against a live hub:

1. registration over REST, then signed writes (rename_agent, kd-mcp-v1 headers): each reply
   carries a write receipt (kd-log-batch-v1) whose batch text, rebuilt from its fields
   (recipe, origin, first_seq, size, root, time_ms, key_id joined by LF), verifies with
   kd-passport-1 from /.well-known/jwks.json, whose row's leaf is in the signed batch tree
   (RFC 9162 inclusion at seq - first_seq), and which names the reply's event_seq;
2. the checkpoint (GET /log/checkpoint, the tlog-tiles location, and /.well-known/kd-checkpoint):
   a signed note whose body is a tlog-checkpoint (origin, size, base64 root), whose signature
   line is under the origin as key name, with the 4-byte key hash of the C2SP verifier key
   `<origin>+<hex key hash>+<base64(0x01 || key)>` and an Ed25519 signature over the body;
   an edited note does not verify;
3. the inclusion proof of every receipt's leaf (SHA-256(0x00 || row_hash bytes)) under the
   checkpoint's root (RFC 9162 §2.1.3.2), from the receipt's proof_url; a wrong leaf or a
   changed proof does not verify;
4. get_history: each event's proof verifies under the checkpoint get_history returns;
5. a consistency proof between two checkpoints (RFC 9162 §2.1.4.2) verifies against the two
   signed roots, and a changed one does not;
6. the tiles: the level-0 hash tiles and the entry bundles up to the newer checkpoint's size
   (`tile/0/<N>[.p/<W>]`, `tile/entries/<N>[.p/<W>]`), each entry hashing to its leaf, the
   level-1 tiles holding the roots of the full level-0 tiles, and the root recomputed from the
   leaves (RFC 6962 MTH) equal to the signed root.

Prints one line per check and, last, exactly ``N passed, M failed``; exits 1 on any failure.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

# The kd-mcp-v1 signing, the REST tool call and the pass/fail count are the receipts peer's
# (the peers' own code, not the hub's); everything about the log below is written here.
import python_receipts_client as peer
from peer_checks import checks
from python_receipts_client import BASE, b64url, b64url_decode, check, tool, verifies

TILE_WIDTH = 256

# ---- RFC 6962 hashing and the RFC 9162 verification algorithms ------------------------------


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def leaf_hash(data: bytes) -> bytes:
    return sha256(b"\x00" + data)


def node_hash(left: bytes, right: bytes) -> bytes:
    return sha256(b"\x01" + left + right)


def mth(leaves: list[bytes]) -> bytes:
    """RFC 6962 §2.1 MTH over leaf hashes: split at the largest power of two below n."""
    n = len(leaves)
    if n == 0:
        return sha256(b"")
    if n == 1:
        return leaves[0]
    k = 1
    while k * 2 < n:
        k *= 2
    return node_hash(mth(leaves[:k]), mth(leaves[k:]))


def verify_inclusion(index: int, size: int, leaf: bytes, path: list[bytes], root: bytes) -> bool:
    """RFC 9162 §2.1.3.2."""
    if index >= size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def verify_consistency(first: int, second: int, first_root: bytes, second_root: bytes, path: list[bytes]) -> bool:
    """RFC 9162 §2.1.4.2 (first == second: an empty proof and equal roots)."""
    if first == second:
        return not path and first_root == second_root
    if first == 0 or first > second or not path:
        return False
    if first & (first - 1) == 0:
        path = [first_root] + path
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return fr == first_root and sr == second_root and sn == 0


# ---- C2SP signed-note and tlog-checkpoint --------------------------------------------------


def key_hash(name: str, public_key: bytes) -> bytes:
    """signed-note: the first 4 bytes of SHA-256(key name || 0x0A || 0x01 || public key)."""
    return sha256(name.encode() + b"\n" + b"\x01" + public_key)[:4]


def vkey(name: str, public_key: bytes) -> str:
    """The C2SP verifier key text: <name>+<hex key hash>+<base64(0x01 || key)>."""
    encoded = base64.b64encode(b"\x01" + public_key).decode()
    return f"{name}+{key_hash(name, public_key).hex()}+{encoded}"


def parse_vkey(text: str) -> tuple[str, bytes, Ed25519PublicKey]:
    # The key name holds no "+"; the base64 key may.
    name, hash_hex, key_b64 = text.split("+", 2)
    raw = base64.b64decode(key_b64, validate=True)
    if raw[0] != 1 or len(raw) != 33:
        raise ValueError("not an Ed25519 verifier key")
    if key_hash(name, raw[1:]).hex() != hash_hex:
        raise ValueError("the key hash does not match the key")
    return name, bytes.fromhex(hash_hex), Ed25519PublicKey.from_public_bytes(raw[1:])


def verify_note(note: str, verifier: str) -> str | None:
    """The note's body when a signature line by `verifier` verifies over it, else None.

    signed-note: the text, a blank line, then lines "— <key name> <base64(key hash || sig)>".
    The signed message is the text up to and including its final newline."""
    name, hash4, public = parse_vkey(verifier)
    if "\n\n" not in note or not note.endswith("\n"):
        return None
    body, signatures = note.split("\n\n", 1)
    body += "\n"
    for line in signatures.rstrip("\n").split("\n"):
        if not line.startswith("\u2014 "):
            return None
        line_name, _, sig_b64 = line[2:].rpartition(" ")
        if line_name != name:
            continue
        try:
            sig = base64.b64decode(sig_b64, validate=True)
        except ValueError:
            return None
        if sig[:4] != hash4:
            continue
        try:
            public.verify(sig[4:], body.encode())
            return body
        except InvalidSignature:
            return None
    return None


def parse_checkpoint(body: str) -> tuple[str, int, bytes]:
    """tlog-checkpoint: origin, decimal size, base64 root, then optional extension lines."""
    lines = body.split("\n")
    origin, size_text, root_b64 = lines[0], lines[1], lines[2]
    if not size_text.isdigit() or (size_text.startswith("0") and size_text != "0"):
        raise ValueError(f"bad tree size {size_text!r}")
    root = base64.b64decode(root_b64, validate=True)
    if len(root) != 32:
        raise ValueError("the root is not 32 bytes")
    return origin, int(size_text), root


# ---- tlog-tiles paths ---------------------------------------------------------------------


def tile_index(n: int) -> str:
    groups = [f"{n % 1000:03d}"]
    n //= 1000
    while n > 0:
        groups.append(f"x{n % 1000:03d}")
        n //= 1000
    return "/".join(reversed(groups))


def tile_path(level: str | int, index: int, width: int) -> str:
    path = f"/log/tile/{level}/{tile_index(index)}"
    return path if width == TILE_WIDTH else f"{path}.p/{width}"


# ---- signed calls and reads ---------------------------------------------------------------


def signed_headers(key: Ed25519PrivateKey, tool_name: str, agent_id: str, args: Any) -> dict[str, str]:
    return peer.signed_headers(key, tool_name, agent_id, args) | {"x-karmadue-agent": agent_id}


def fetch(url: str) -> tuple[int, bytes]:
    """GET `url` (a path on the hub, or absolute): the status and the body's bytes."""
    try:
        with urllib.request.urlopen(url if url.startswith("http") else BASE + url, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def get_json(url: str) -> tuple[int, Any]:
    status, body = fetch(url)
    try:
        return status, json.loads(body)
    except ValueError:
        return status, body


def hashes(values: list[str]) -> list[bytes]:
    return [base64.b64decode(value, validate=True) for value in values]


# ---- the checks ---------------------------------------------------------------------------


def register() -> tuple[Ed25519PrivateKey, str]:
    key = Ed25519PrivateKey.generate()
    _, challenge = tool("register_challenge", {})
    status, registered = tool(
        "register_agent",
        {
            "name": "tlog peer " + secrets.token_hex(5),
            "platform": "python-cryptography",
            "public_key": b64url(key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)),
            "challenge_id": challenge["data"]["challenge_id"],
            "signature": b64url(key.sign(challenge["data"]["payload"].encode())),
        },
    )
    check("register_agent over REST", status == 200 and registered.get("ok") is True, registered)
    return key, registered["data"]["agent_id"]


def signed_write(key: Ed25519PrivateKey, agent_id: str, passport: Ed25519PublicKey, origin: str) -> dict[str, Any]:
    args = {"agent_id": agent_id, "name": "tlog peer " + secrets.token_hex(5)}
    status, renamed = tool("rename_agent", args, signed_headers(key, "rename_agent", agent_id, args))
    receipt = renamed.get("receipt", {})
    check("a signed rename_agent answers a receipt", status == 200 and isinstance(receipt, dict) and receipt.get("recipe") == "kd-log-batch-v1", renamed)
    batch = receipt["batch"]
    text = "\n".join(["kd-log-batch-v1", receipt["origin"], str(batch["first_seq"]), str(batch["size"]), batch["root"], str(batch["time_ms"]), batch["key_id"]])
    check("the batch's text rebuilt from its fields is the hub's", text == batch["signed_text"], (text, batch["signed_text"]))
    check("the receipt names the write's event_seq and the log's origin", receipt["seq"] == renamed["data"]["event_seq"] and receipt["origin"] == origin, receipt)
    check("the batch's signature verifies with kd-passport-1", verifies(passport, text, batch["signature"]))
    forged = text.replace(batch["root"], base64.b64encode(bytes(32)).decode())
    check("a batch text with another root does not verify", not verifies(passport, forged, batch["signature"]))
    index = receipt["seq"] - batch["first_seq"]
    leaf = leaf_hash(bytes.fromhex(receipt["row_hash"]))
    path = [base64.b64decode(h) for h in receipt["path"]]
    batch_root = base64.b64decode(batch["root"])
    check("the receipt's index is its seq's place in the batch", index == receipt["index"] and 0 <= index < batch["size"], receipt)
    check("the row's leaf is in the signed batch tree (RFC 9162 2.1.3.2)", verify_inclusion(index, batch["size"], leaf, path, batch_root))
    other = leaf_hash(bytes.fromhex("0" * 64))
    check("another row's leaf is not", not verify_inclusion(index, batch["size"], other, path, batch_root))
    return receipt


def checkpoint_at_least(size: int, verifier: str) -> tuple[str, int, bytes, str]:
    """Waits (up to 30 s) for a checkpoint of at least `size` leaves; verifies its note."""
    deadline = time.time() + 30
    while True:
        status, body = fetch("/log/checkpoint")
        note = body.decode() if status == 200 else ""
        signed = verify_note(note, verifier) if note else None
        if signed is not None:
            origin, tree_size, root = parse_checkpoint(signed)
            if tree_size >= size:
                return origin, tree_size, root, note
        if time.time() > deadline:
            raise RuntimeError(f"no verified checkpoint of size >= {size} within 30 s: {status} {note!r}")
        time.sleep(0.5)


def check_inclusion(receipt: dict[str, Any], size: int, root: bytes) -> None:
    seq = receipt["seq"]
    url = receipt["proof_url"] + f"&size={size}"
    status, proved = get_json(url)
    leaf = leaf_hash(bytes.fromhex(receipt["row_hash"]))
    path = hashes(proved.get("proof", [])) if status == 200 else []
    check(f"the inclusion proof of seq {seq} verifies under the signed root", status == 200 and verify_inclusion(seq - 1, size, leaf, path, root), proved)
    wrong = leaf_hash(bytes.fromhex("00" * 32))
    check(f"another leaf at seq {seq} does not", not verify_inclusion(seq - 1, size, wrong, path, root))
    if path:
        changed = [path[0][:-1] + bytes([path[0][-1] ^ 1])] + path[1:]
        check(f"a changed proof of seq {seq} does not", not verify_inclusion(seq - 1, size, leaf, changed, root))


def check_history(key: Ed25519PrivateKey, agent_id: str, verifier: str) -> None:
    args = {"agent_id": agent_id}
    status, history = tool("get_history", args, signed_headers(key, "get_history", agent_id, args))
    data = history.get("data", {})
    body = verify_note(data.get("checkpoint") or "", verifier)
    check("get_history returns a checkpoint that verifies", status == 200 and body is not None, history)
    if body is None:
        return
    _, size, root = parse_checkpoint(body)
    covered = [event for event in data["events"] if event["seq"] <= size]
    ok = bool(covered) and all(
        event["proof"] is not None
        and verify_inclusion(event["seq"] - 1, size, leaf_hash(bytes.fromhex(event["row_hash"])), hashes(event["proof"]["proof"]), root)
        for event in covered
    )
    check(f"get_history: the proofs of the agent's {len(covered)} covered events verify", ok, covered)


def check_tiles(size: int, root: bytes) -> None:
    leaves: list[bytes] = []
    entries_ok = True
    for index in range((size + TILE_WIDTH - 1) // TILE_WIDTH):
        width = min(TILE_WIDTH, size - index * TILE_WIDTH)
        status, tile = fetch(tile_path(0, index, width))
        bundle_status, bundle = fetch(tile_path("entries", index, width))
        if status != 200 or len(tile) != 32 * width or bundle_status != 200:
            check(f"level-0 tile and entry bundle {index} (width {width})", False, (status, len(tile), bundle_status))
            return
        tile_leaves = [tile[at : at + 32] for at in range(0, len(tile), 32)]
        at = 0
        for leaf in tile_leaves:
            length = int.from_bytes(bundle[at : at + 2], "big")
            entry = bundle[at + 2 : at + 2 + length]
            at += 2 + length
            entries_ok = entries_ok and leaf_hash(entry) == leaf
        entries_ok = entries_ok and at == len(bundle)
        leaves.extend(tile_leaves)
    check(f"each of the {size} entries hashes to its level-0 tile leaf", entries_ok)
    full = size // TILE_WIDTH
    if full:
        status, tile = fetch(tile_path(1, 0, min(full, TILE_WIDTH)))
        expected = b"".join(mth(leaves[i * TILE_WIDTH : (i + 1) * TILE_WIDTH]) for i in range(min(full, TILE_WIDTH)))
        check("the level-1 tile holds the roots of the full level-0 tiles", status == 200 and tile == expected, status)
    check(f"the root recomputed from the tiles' {size} leaves is the signed root", mth(leaves) == root)


def main() -> int:
    if not BASE:
        print("set KD_HUB_URL to the hub's base URL, e.g. http://127.0.0.1:8080")
        return 2
    _, jwks = get_json("/.well-known/jwks.json")
    jwk = next(key for key in jwks["keys"] if key["kid"] == "kd-passport-1")
    public = b64url_decode(jwk["x"])
    passport = Ed25519PublicKey.from_public_bytes(public)
    origin = urllib.parse.urlsplit(BASE).netloc.lower() + "/kd-log"
    verifier = vkey(origin, public)
    check("the C2SP verifier key parses back", parse_vkey(verifier)[0] == origin, verifier)

    key, agent_id = register()
    receipts = [signed_write(key, agent_id, passport, origin) for _ in range(3)]
    newest = max(receipt["seq"] for receipt in receipts)
    origin_line, size, root, note = checkpoint_at_least(newest, verifier)
    check(f"checkpoint {size} verifies under the verifier key and names the origin", origin_line == origin, origin_line)
    status, body = fetch("/.well-known/kd-checkpoint")
    check("/.well-known/kd-checkpoint is a verifying checkpoint", status == 200 and verify_note(body.decode(), verifier) is not None, body[:200])
    edited = note.replace(f"\n{size}\n", f"\n{size + 1}\n", 1)
    check("an edited checkpoint does not verify", verify_note(edited, verifier) is None)
    other = vkey(origin, Ed25519PrivateKey.generate().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))
    check("the checkpoint does not verify under another key", verify_note(note, other) is None)
    for receipt in receipts:
        check_inclusion(receipt, size, root)
    check_history(key, agent_id, verifier)

    later = signed_write(key, agent_id, passport, origin)
    _, new_size, new_root, _ = checkpoint_at_least(later["seq"], verifier)
    check("a later checkpoint covers the later write", new_size > size, (size, new_size))
    status, proved = get_json(f"/log/proof/consistency?old={size}&new={new_size}")
    path = hashes(proved.get("proof", [])) if status == 200 else []
    check(f"the consistency proof {size} -> {new_size} verifies against the two signed roots", status == 200 and verify_consistency(size, new_size, root, new_root, path), proved)
    if path:
        changed = path[:-1] + [path[-1][:-1] + bytes([path[-1][-1] ^ 1])]
        check("a changed consistency proof does not", not verify_consistency(size, new_size, root, new_root, changed))
    check("a root the hub did not sign is not consistent", not verify_consistency(size, new_size, sha256(b"forged"), new_root, path))
    check_inclusion(later, new_size, new_root)
    check_tiles(new_size, new_root)

    print(f"{checks.passed} passed, {checks.failed} failed")
    return 0 if checks.failed == 0 else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as error:  # an unexpected answer shape is a failure, never a crash without a summary
        checks.failed += 1
        print(f"FAIL unexpected error: {error!r}")
        print(f"{checks.passed} passed, {checks.failed} failed")
        sys.exit(1)
