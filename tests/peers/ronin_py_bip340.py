"""Peer test: ronin.py's own BIP-340 Schnorr and NIP-01 serialization, checked against the
published vectors the Rust suite uses (crates/protocol/tests/vectors/, copied from
bitcoin/bips bip-0340/test-vectors.csv and the nostr-tools escaping cases; SOURCES.md there).

  python3 tests/peers/ronin_py_bip340.py

1. Every BIP-340 vector (19): the public key from the secret, the signature from the secret,
   message and aux_rand, byte for byte; and the verification result, true or false.
2. Every valid escaping case: ronin.py's serialization is the hashed preimage, its id the
   event's id, and the event's signature verifies under ronin.py's verifier.
3. A signature made with fresh aux randomness verifies, and a changed message does not.

Prints one line per check and, last, exactly `N passed, M failed`; exits 1 on any failure.
"""

import csv
import hashlib
import importlib.util
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
VECTORS = ROOT / "crates" / "protocol" / "tests" / "vectors"
spec = importlib.util.spec_from_file_location("ronin", ROOT / "crates" / "ronin" / "clients" / "ronin.py")
ronin = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ronin)

passed = failed = 0


def check(name, condition, detail=""):
    global passed, failed
    if condition:
        passed += 1
        print(f"ok   {name}")
    else:
        failed += 1
        print(f"FAIL {name}: {detail}")


with open(VECTORS / "bip340-test-vectors.csv", newline="", encoding="utf-8") as handle:
    rows = list(csv.DictReader(handle))
check("the BIP-340 file has its 19 vectors", len(rows) == 19, len(rows))
for row in rows:
    index = row["index"]
    public = bytes.fromhex(row["public key"])
    message = bytes.fromhex(row["message"])
    signature = bytes.fromhex(row["signature"])
    expected = row["verification result"] == "TRUE"
    if row["secret key"]:
        secret = bytes.fromhex(row["secret key"])
        check(f"vector {index}: the public key", ronin.pubkey_gen(secret) == public, ronin.pubkey_gen(secret).hex())
        made = ronin.schnorr_sign(message, secret, bytes.fromhex(row["aux_rand"]))
        check(f"vector {index}: the signature", made == signature, made.hex())
    check(f"vector {index}: verify is {expected} ({row['comment'] or 'no comment'})",
          ronin.schnorr_verify(message, public, signature) == expected)

escaping = json.loads((VECTORS / "nostr-escaping-events.json").read_text(encoding="utf-8"))
for case in escaping["cases"]:
    if case.get("expect") != "valid" or "event" not in case:
        continue
    event = case["event"]
    text = ronin.serialize(event["pubkey"], event["created_at"], event["kind"], event["tags"], event["content"])
    check(f"escaping '{case['description']}': the preimage", text == case["serialized_preimage"], text)
    event_id = hashlib.sha256(text.encode("utf-8")).hexdigest()
    check(f"escaping '{case['description']}': the id", event_id == event["id"], event_id)
    check(f"escaping '{case['description']}': the signature verifies",
          ronin.schnorr_verify(bytes.fromhex(event["id"]), bytes.fromhex(event["pubkey"]), bytes.fromhex(event["sig"])))

key = ronin.keygen()
event = ronin.sign({"kind": 1, "tags": [["t", "x"]], "content": "café \n \u2028"}, key["secret"])
message = bytes.fromhex(event["id"])
check("a fresh signature verifies", ronin.schnorr_verify(message, bytes.fromhex(key["pubkey"]), bytes.fromhex(event["sig"])))
check("a changed message does not", not ronin.schnorr_verify(bytes(32), bytes.fromhex(key["pubkey"]), bytes.fromhex(event["sig"])))
new = ronin.keygen()
made = bytes.fromhex(ronin.proof(new["secret"], key["pubkey"]))
check("a SUCCESSOR proof verifies under the new key over sha256 of the old key's bytes",
      ronin.schnorr_verify(hashlib.sha256(bytes.fromhex(key["pubkey"])).digest(), bytes.fromhex(new["pubkey"]), made))

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
