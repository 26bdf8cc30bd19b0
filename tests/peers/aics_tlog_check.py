"""Peer test: the hub's transparency log read by an existing C2SP client, aics-tlog (PyPI,
Apache-2.0, pure Python: tlog-tiles, tlog-checkpoint, signed-note and the RFC 9162
verifiers), pinned in tests/peers/requirements-tlog.txt.

    KD_HUB_URL=http://127.0.0.1:PORT tests/peers/.venv/bin/python tests/peers/aics_tlog_check.py

With the hub's verifier key (`<origin>+<hex key hash>+<base64(0x01 || kd-passport-1)>`, the
key from /.well-known/jwks.json) it: reads `<hub>/log/checkpoint` through its tile reader and
verifies it (`verify_checkpoint`, expected origin); after a signed write, verifies the write's
inclusion proof (`verify_leaf_inclusion`, the leaf data being the row hash's 32 bytes) and
the consistency proof between two checkpoints (`verify_consistency`); authenticates every tile
and entry bundle of the tree against the signed root (`audit_tiles`); and recomputes the root
and both proofs from the tiles alone, which must equal the hub's. The agent registration and
signing are python_tlog_client.py's.

Prints one line per check and, last, exactly ``N passed, M failed``; exits 1 on any failure.
"""

from __future__ import annotations

import base64
import sys
import urllib.parse

import aics_tlog
import python_receipts_client as counted
import python_tlog_client as peer
from peer_checks import checks


def read_checkpoint(reader: aics_tlog.HttpTileReader, log_key: aics_tlog.VKey, origin: str) -> tuple[int, bytes]:
    result = aics_tlog.verify_checkpoint(aics_tlog.parse_note(reader.read_checkpoint()), log_key, expected_origin=origin)
    counted.check(f"aics-tlog: checkpoint {result.size} verifies (signed-note, Ed25519, origin {origin})", result.ok and result.origin == origin, result)
    return result.size, result.root


def main() -> int:
    if not peer.BASE:
        print("set KD_HUB_URL to the hub's base URL, e.g. http://127.0.0.1:8080")
        return 2
    _, jwks = peer.get_json("/.well-known/jwks.json")
    jwk = next(key for key in jwks["keys"] if key["kid"] == "kd-passport-1")
    public = peer.b64url_decode(jwk["x"])
    origin = urllib.parse.urlsplit(peer.BASE).netloc.lower() + "/kd-log"
    log_key = aics_tlog.parse_vkey(peer.vkey(origin, public))
    counted.check("aics-tlog parses the hub's verifier key", log_key.name == origin, log_key)
    reader = aics_tlog.HttpTileReader(peer.BASE + "/log", proxies={})

    key, agent_id = peer.register()
    passport = log_key.ed25519
    receipt = peer.signed_write(key, agent_id, passport, origin)
    peer.checkpoint_at_least(receipt["seq"], peer.vkey(origin, public))
    old, old_root = read_checkpoint(reader, log_key, origin)
    seq = receipt["seq"]
    _, proved = peer.get_json(f"/log/proof/inclusion?seq={seq}&size={old}")
    proof = peer.hashes(proved["proof"])
    leaf = bytes.fromhex(receipt["row_hash"])
    counted.check(f"aics-tlog: the inclusion proof of seq {seq} verifies", aics_tlog.verify_leaf_inclusion(leaf, seq - 1, old, proof, old_root), proved)
    from_tiles = aics_tlog.inclusion_proof_from_tiles(reader, seq - 1, old)
    counted.check("aics-tlog: the same proof from the tiles alone", from_tiles == proof, [base64.b64encode(h).decode() for h in from_tiles])

    later = peer.signed_write(key, agent_id, passport, origin)
    peer.checkpoint_at_least(later["seq"], peer.vkey(origin, public))
    new, new_root = read_checkpoint(reader, log_key, origin)
    _, proved = peer.get_json(f"/log/proof/consistency?old={old}&new={new}")
    proof = peer.hashes(proved["proof"])
    counted.check(f"aics-tlog: the consistency proof {old} -> {new} verifies", aics_tlog.verify_consistency(old, new, old_root, new_root, proof), proved)
    counted.check("aics-tlog: the same proof from the tiles alone", aics_tlog.consistency_proof_from_tiles(reader, old, new) == proof)
    counted.check(f"aics-tlog: the root of {new} from the tiles is the signed root", aics_tlog.tree_root_from_tiles(reader, new) == new_root)
    try:
        report = aics_tlog.audit_tiles(reader, new, new_root)
        counted.check(f"aics-tlog: every tile ({report.tiles}) and entry bundle ({report.bundles}) authenticates", True)
    except (aics_tlog.TileMissingError, aics_tlog.TileVerificationError) as error:
        counted.check("aics-tlog: every tile and entry bundle authenticates", False, error)

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
