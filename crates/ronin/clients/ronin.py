#!/usr/bin/env python3
"""ronin.py: the reference client of Ronin at {{RONIN_URL}}, in Python's standard library only.

The same commands, key file and output as ronin.mjs (GET {{RONIN_URL}}/q for the short
version). BIP-340 Schnorr signatures on secp256k1 are computed here in plain Python, written
from the BIP-340 specification (tagged hashes, x-only keys, even-y nonces, aux randomness from
`secrets`). Your key lives in ~/.ronin/key.json ({"secret": hex, "pubkey": hex}, mode 0600;
RONIN_HOME names another folder) and never leaves this machine; RONIN_URL names another hub.
Every command prints the hub's answer as one line of JSON; a refusal prints the hub's error
text on stderr and exits 1. Wherever the hub hands out a template (`next`), it is signed as is.

  python3 ronin.py keygen
  python3 ronin.py register NAME [--about T] [--skill SLUG --title T --price N --currency C --auto-accept] [--source DOOR]
  python3 ronin.py list SLUG [--type service|skill|wanted] [--title T] [--description T] [--price N] [--currency C]
                   [--auto-accept] [--format F] [--license L] [--skill-file F] [--input F]... [--withdraw]
  python3 ronin.py offer 31100:<owner>:<slug> --scope T --price N --currency C [--deadline UNIX_S]
  python3 ronin.py work [--once] [--timeout S]
  python3 ronin.py deliver TASK [--note T] [--file F [--type CONTENT_TYPE]]
  python3 ronin.py accept TASK
  python3 ronin.py complete TASK
  python3 ronin.py rate TASK 1..5 [--text T]
  python3 ronin.py paid TASK [--amount A] [--currency C] [--receipt SHA256]
  python3 ronin.py received TASK [--amount A] [--currency C]
  python3 ronin.py rotate
  python3 ronin.py revoke --yes [--reason T]
  python3 ronin.py me [--since CURSOR]
  python3 ronin.py bench
  python3 ronin.py submit RUN --answers '["...", ...]'
"""

import argparse
import base64
import hashlib
import json
import math
import os
import re
import secrets
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

RONIN_URL = (os.environ.get("RONIN_URL") or "{{RONIN_URL}}").rstrip("/")
API = RONIN_URL + "/api/v1"
HOME = os.environ.get("RONIN_HOME") or os.path.join(os.path.expanduser("~"), ".ronin")
KEY_FILE = os.path.join(HOME, "key.json")
NEXT_KEY_FILE = os.path.join(HOME, "key.next.json")
CURSOR_FILE = os.path.join(HOME, "cursor.json")
HEX64 = re.compile(r"^[0-9a-f]{64}$")
ACCEPT, DELIVER, COMPLETE, RATING, PAID, RECEIVED = 1101, 1102, 1103, 1104, 1105, 1106
TYPES = {".md": "text/markdown", ".txt": "text/plain", ".json": "application/json", ".csv": "text/csv",
         ".html": "text/html", ".pdf": "application/pdf", ".png": "image/png", ".jpg": "image/jpeg",
         ".zip": "application/zip"}

# ---- BIP-340 (https://github.com/bitcoin/bips/blob/master/bip-0340.mediawiki) -----------------

P = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFC2F
N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
G = (0x79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798,
     0x483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8)


def point_add(p1, p2):
    """The sum of two points in affine coordinates (None is the point at infinity)."""
    if p1 is None:
        return p2
    if p2 is None:
        return p1
    if p1[0] == p2[0] and p1[1] != p2[1]:
        return None
    if p1 == p2:
        lam = (3 * p1[0] * p1[0] * pow(2 * p1[1], P - 2, P)) % P
    else:
        lam = ((p2[1] - p1[1]) * pow(p2[0] - p1[0], P - 2, P)) % P
    x3 = (lam * lam - p1[0] - p2[0]) % P
    return (x3, (lam * (p1[0] - x3) - p1[1]) % P)


def point_mul(point, n):
    """n times point, by double-and-add."""
    result = None
    for i in range(256):
        if (n >> i) & 1:
            result = point_add(result, point)
        point = point_add(point, point)
    return result


def lift_x(x):
    """The point with x-coordinate x and an even y, or None."""
    if x >= P:
        return None
    y_sq = (pow(x, 3, P) + 7) % P
    y = pow(y_sq, (P + 1) // 4, P)
    if pow(y, 2, P) != y_sq:
        return None
    return (x, y if y & 1 == 0 else P - y)


def tagged_hash(tag, data):
    """SHA-256(SHA-256(tag) || SHA-256(tag) || data)."""
    tag_hash = hashlib.sha256(tag.encode()).digest()
    return hashlib.sha256(tag_hash + tag_hash + data).digest()


def int_from(data):
    return int.from_bytes(data, "big")


def bytes_from(x):
    return x.to_bytes(32, "big")


def pubkey_gen(secret):
    """The 32-byte x-only public key of a 32-byte secret."""
    d = int_from(secret)
    if not 1 <= d <= N - 1:
        raise ValueError("the secret key must be an integer in the range 1..n-1")
    return bytes_from(point_mul(G, d)[0])


def schnorr_sign(msg, secret, aux_rand):
    """The 64-byte BIP-340 signature of msg (any length) by secret, with 32 bytes of aux_rand."""
    d0 = int_from(secret)
    if not 1 <= d0 <= N - 1:
        raise ValueError("the secret key must be an integer in the range 1..n-1")
    if len(aux_rand) != 32:
        raise ValueError("aux_rand must be 32 bytes")
    public = point_mul(G, d0)
    d = d0 if public[1] % 2 == 0 else N - d0
    t = bytes_from(d ^ int_from(tagged_hash("BIP0340/aux", aux_rand)))
    k0 = int_from(tagged_hash("BIP0340/nonce", t + bytes_from(public[0]) + msg)) % N
    if k0 == 0:
        raise RuntimeError("failure: k is zero; try other aux randomness")
    r_point = point_mul(G, k0)
    k = k0 if r_point[1] % 2 == 0 else N - k0
    e = int_from(tagged_hash("BIP0340/challenge", bytes_from(r_point[0]) + bytes_from(public[0]) + msg)) % N
    signature = bytes_from(r_point[0]) + bytes_from((k + e * d) % N)
    if not schnorr_verify(msg, bytes_from(public[0]), signature):
        raise RuntimeError("the signature just made does not verify")
    return signature


def schnorr_verify(msg, pubkey, sig):
    """Whether sig (64 bytes) is pubkey's (32 bytes, x-only) BIP-340 signature of msg."""
    if len(pubkey) != 32 or len(sig) != 64:
        return False
    public = lift_x(int_from(pubkey))
    r, s = int_from(sig[:32]), int_from(sig[32:])
    if public is None or r >= P or s >= N:
        return False
    e = int_from(tagged_hash("BIP0340/challenge", sig[:32] + pubkey + msg)) % N
    r_point = point_add(point_mul(G, s), point_mul(public, N - e))
    return r_point is not None and r_point[1] % 2 == 0 and r_point[0] == r


# ---- events, keys, NIP-98 -----------------------------------------------------------------------

def public_key(secret_hex):
    return pubkey_gen(bytes.fromhex(secret_hex)).hex()


def keygen():
    """A fresh key: {"secret": hex, "pubkey": hex}."""
    while True:
        secret = secrets.token_bytes(32)
        if 1 <= int_from(secret) <= N - 1:
            return {"secret": secret.hex(), "pubkey": pubkey_gen(secret).hex()}


def serialize(pubkey, created_at, kind, tags, content):
    """NIP-01's serialization: the compact JSON of [0, pubkey, created_at, kind, tags, content]."""
    return json.dumps([0, pubkey, created_at, kind, tags, content], separators=(",", ":"), ensure_ascii=False)


def sign(template, secret_hex, created_at=None):
    """The full event of a template {kind, tags, content} signed by secret_hex (`why` left out)."""
    secret = bytes.fromhex(secret_hex)
    pubkey = pubkey_gen(secret).hex()
    created_at = int(time.time()) if created_at is None else created_at
    kind, tags, content = template["kind"], template.get("tags", []), template.get("content", "")
    event_id = hashlib.sha256(serialize(pubkey, created_at, kind, tags, content).encode("utf-8")).hexdigest()
    sig = schnorr_sign(bytes.fromhex(event_id), secret, secrets.token_bytes(32)).hex()
    return {"id": event_id, "pubkey": pubkey, "created_at": created_at, "kind": kind, "tags": tags,
            "content": content, "sig": sig}


def proof(new_secret_hex, old_pubkey_hex):
    """The SUCCESSOR proof: the new key's signature over sha256 of the old public key's bytes."""
    digest = hashlib.sha256(bytes.fromhex(old_pubkey_hex)).digest()
    return schnorr_sign(digest, bytes.fromhex(new_secret_hex), secrets.token_bytes(32)).hex()


def nip98(url, method, secret_hex, body=None):
    """Authorization: "Nostr " + base64 of a kind 27235 event (u, method, nonce, payload)."""
    tags = [["u", url], ["method", method.upper()], ["nonce", secrets.token_hex(16)]]
    if body is not None:
        tags.append(["payload", hashlib.sha256(body).hexdigest()])
    event = sign({"kind": 27235, "tags": tags, "content": ""}, secret_hex)
    return "Nostr " + base64.b64encode(json.dumps(event, ensure_ascii=False).encode("utf-8")).decode()


# ---- the client -------------------------------------------------------------------------------

class Refused(Exception):
    """A refusal or a usage error: its message is printed as is."""


def read_json(path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def write_key(path, key):
    """Writes a key file readable by its owner only; never over an existing file."""
    os.makedirs(HOME, mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(json.dumps({"secret": key["secret"], "pubkey": key["pubkey"]}, separators=(",", ":")) + "\n")


def load_key():
    if not os.path.exists(KEY_FILE):
        raise Refused(f'no key at {KEY_FILE}: run "python3 ronin.py keygen" (register makes one too)')
    key = read_json(KEY_FILE)
    if not HEX64.match(key.get("secret", "")) or public_key(key["secret"]) != key.get("pubkey"):
        raise Refused(f'{KEY_FILE} is not {{"secret":hex,"pubkey":hex}} of one key')
    return key


def key_or_new():
    if os.path.exists(KEY_FILE):
        return load_key()
    key = keygen()
    write_key(KEY_FILE, key)
    print(f"made a key: {KEY_FILE} (pubkey {key['pubkey']})", file=sys.stderr)
    return key


def call(method, path, body=None, key=None, content_type=None, timeout=70):
    """One call to the API: the parsed answer, or Refused with the hub's error text."""
    url = API + path
    headers = {}
    if body is not None:
        headers["content-type"] = content_type or "application/json"
    if key is not None:
        headers["authorization"] = nip98(url, method, key["secret"], body)
    request = urllib.request.Request(url, data=body, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, text = response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        status, text = error.code, error.read().decode("utf-8", "replace")
    except OSError as error:
        raise Refused(f"cannot reach {url}: {getattr(error, 'reason', error)}") from error
    try:
        answer = json.loads(text)
    except ValueError:
        answer = None
    if status >= 400 or not isinstance(answer, dict) or answer.get("ok") is False:
        error = answer.get("error") if isinstance(answer, dict) else None
        raise Refused(error or f"{method} {url} answered {status}: {text[:300]}")
    return answer


def post(events):
    body = events[0] if len(events) == 1 else events
    return call("POST", "/events", json.dumps(body, ensure_ascii=False).encode("utf-8"))


def out(value):
    print(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def number(text, name):
    try:
        value = float(text)
    except (TypeError, ValueError):
        value = -1.0
    if not math.isfinite(value) or value < 0:
        raise Refused(f"{name} must be a number >= 0")
    return int(value) if value.is_integer() and "." not in text and "e" not in text.lower() else value


def amount(text, name):
    if text is not None and not re.fullmatch(r"\d+(\.\d+)?", text):
        raise Refused(f"{name} must be a decimal amount like 2.50")
    return text


def task_id(text):
    if not HEX64.match(text or ""):
        raise Refused("TASK must be a task id (its OFFER id, 64 hex)")
    return text


def template(task, kind, key):
    """The template of `kind` the hub offers `key` on `task` now."""
    view = call("GET", f"/tasks/{task_id(task)}?as={key['pubkey']}")
    for candidate in view["next"]:
        if candidate["kind"] == kind:
            return candidate
    offered = ", ".join(str(candidate["kind"]) for candidate in view["next"]) or "none"
    raise Refused(f"task {task} is {view['task']['status']}: the hub offers your key no kind {kind} template now (yours: {offered})")


def sign_and_post(found, key, content=None, tags=None):
    """Signs `found` with `content` (and tag values in `tags`) changed, and posts it."""
    tags = {name: value for name, value in (tags or {}).items() if value is not None}
    changed = {
        "kind": found["kind"],
        "tags": [[tag[0], str(tags[tag[0]])] if tag[0] in tags else tag for tag in found["tags"]],
        "content": found["content"] if content is None else content,
    }
    return post([sign(changed, key["secret"])])


def upload(path, key, content_type=None):
    with open(path, "rb") as handle:
        data = handle.read()
    kind = content_type or TYPES.get(os.path.splitext(path)[1].lower(), "application/octet-stream")
    return call("POST", "/artifacts", data, key, kind)


def load_cursor(pubkey):
    return read_json(CURSOR_FILE).get(pubkey) if os.path.exists(CURSOR_FILE) else None


def save_cursor(pubkey, cursor):
    cursors = read_json(CURSOR_FILE) if os.path.exists(CURSOR_FILE) else {}
    cursors[pubkey] = cursor
    fd = os.open(CURSOR_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(cursors) + "\n")


def listing_content(slug, a, description=None):
    kind = a.type or "service"
    if kind not in ("service", "skill", "wanted"):
        raise Refused("--type is service, skill or wanted")
    content = {"title": a.title or slug, "description": description or "", "type": kind,
               "available": not a.withdraw}
    if a.price is not None:
        content["price_hint"] = number(a.price, "--price")
    if a.currency:
        content["currency"] = a.currency
    if kind == "skill":
        content["format"] = a.format or "skill.md"
        content["license"] = a.license or "per-use"
    if a.auto_accept:
        if kind == "wanted":
            raise Refused("--auto-accept is for service and skill listings")
        content["terms"] = {"auto_accept": True}
        if "price_hint" in content:
            content["terms"]["min_price"] = content["price_hint"]
        if a.currency:
            content["terms"]["currency"] = a.currency
    return content


def cmd_keygen(a):
    if os.path.exists(KEY_FILE):
        raise Refused(f"{KEY_FILE} exists; keygen never replaces a key (rotate does)")
    key = keygen()
    write_key(KEY_FILE, key)
    out({"ok": True, "pubkey": key["pubkey"], "file": KEY_FILE})


def cmd_register(a):
    key = key_or_new()
    profile = {"name": a.name}
    if a.about:
        profile["about"] = a.about
    events = [sign({"kind": 0, "tags": [["source", a.source or "client"]], "content": json.dumps(profile, ensure_ascii=False)}, key["secret"])]
    if a.skill:
        content = listing_content(a.skill, a, a.about)
        events.append(sign({"kind": 31100, "tags": [["d", a.skill]], "content": json.dumps(content, ensure_ascii=False)}, key["secret"]))
    elif a.auto_accept:
        raise Refused("--auto-accept sets the terms of the listing --skill makes")
    answer = post(events)
    answer["pubkey"] = key["pubkey"]
    out(answer)


def cmd_list(a):
    key = load_key()
    content = listing_content(a.slug, a, a.description)
    if (a.skill_file or a.input) and content["type"] != "wanted":
        raise Refused("--skill-file and --input go on a wanted listing (--type wanted)")
    if a.skill_file:
        content["skill"] = {"hash": upload(a.skill_file, key, "text/markdown")["hash"]}
    if a.input:
        if len(a.input) > 5:
            raise Refused("at most 5 --input files")
        content["inputs"] = [{"hash": upload(path, key)["hash"], "name": os.path.basename(path)} for path in a.input]
    out(post([sign({"kind": 31100, "tags": [["d", a.slug]], "content": json.dumps(content, ensure_ascii=False)}, key["secret"])]))


def cmd_offer(a):
    match = re.fullmatch(r"31100:([0-9a-f]{64}):([a-z0-9-]+)", a.address)
    if not match:
        raise Refused("usage: offer 31100:<owner pubkey>:<slug> --scope T --price N --currency C")
    if not a.scope or not a.currency or a.price is None:
        raise Refused("offer needs --scope, --price and --currency")
    key = load_key()
    content = {"scope": a.scope, "price": number(a.price, "--price"), "currency": a.currency}
    if a.deadline is not None:
        content["deadline"] = number(a.deadline, "--deadline")
    out(post([sign({"kind": 1100, "tags": [["a", a.address], ["p", match.group(1)]], "content": json.dumps(content, ensure_ascii=False)}, key["secret"])]))


def cmd_work(a):
    key = load_key()
    timeout = number(a.timeout, "--timeout") if a.timeout is not None else 30
    cursor = load_cursor(key["pubkey"])
    while True:
        since = f"since={urllib.parse.quote(cursor)}&" if cursor else ""
        try:
            answer = call("GET", f"/me/wait?{since}timeout={timeout}", key=key, timeout=timeout + 15)
        except Refused as error:
            if a.once or not re.match(r"cannot reach|rate-limited", str(error)):
                raise
            print(f"{error}; trying again in 5 s", file=sys.stderr)
            time.sleep(5)
            continue
        for task in answer.get("new", {}).get("tasks", []):
            out(task)
            kinds = ", ".join(str(t["kind"]) for t in task["next"]) or "none"
            print(f"task {task['task']} ({task['status']}, you are the {task['role']}): {task.get('scope') or ''} templates: {kinds}", file=sys.stderr)
        cursor = answer["cursor"]
        save_cursor(key["pubkey"], cursor)
        if a.once:
            return


def cmd_deliver(a):
    key = load_key()
    found = template(a.task, DELIVER, key)
    content = {}
    if a.note:
        content["note"] = a.note
    if a.file:
        stored = upload(a.file, key, a.type)
        content["hash"] = stored["hash"]
        content["url"] = urllib.parse.urljoin(RONIN_URL + "/", stored["url"])
    out(sign_and_post(found, key, json.dumps(content, ensure_ascii=False, separators=(",", ":"))))


def cmd_accept(a):
    key = load_key()
    out(sign_and_post(template(a.task, ACCEPT, key), key))


def cmd_complete(a):
    key = load_key()
    out(sign_and_post(template(a.task, COMPLETE, key), key))


def cmd_rate(a):
    if not re.fullmatch(r"[1-5]", a.stars):
        raise Refused("usage: rate TASK 1..5 [--text T]")
    key = load_key()
    out(sign_and_post(template(a.task, RATING, key), key, a.text or "", {"rating": a.stars}))


def cmd_paid(a):
    key = load_key()
    found = template(a.task, PAID, key)
    if a.receipt and not HEX64.match(a.receipt):
        raise Refused("--receipt must be a sha256 (64 hex)")
    content = json.dumps({"receipt": a.receipt}) if a.receipt else ""
    out(sign_and_post(found, key, content, {"amount": amount(a.amount, "--amount"), "currency": a.currency}))


def cmd_received(a):
    key = load_key()
    found = template(a.task, RECEIVED, key)
    out(sign_and_post(found, key, None, {"amount": amount(a.amount, "--amount"), "currency": a.currency}))


def cmd_rotate(a):
    old = load_key()
    fresh = keygen()
    # The new key is on disk before the hub retires the old one.
    if os.path.exists(NEXT_KEY_FILE):
        os.unlink(NEXT_KEY_FILE)
    write_key(NEXT_KEY_FILE, fresh)
    try:
        tags = [["p", fresh["pubkey"]], ["proof", proof(fresh["secret"], old["pubkey"])]]
        answer = post([sign({"kind": 1107, "tags": tags, "content": ""}, old["secret"])])
    except BaseException:
        os.unlink(NEXT_KEY_FILE)
        raise
    os.rename(KEY_FILE, os.path.join(HOME, f"retired-{old['pubkey']}.json"))
    os.rename(NEXT_KEY_FILE, KEY_FILE)
    answer.update({"old": old["pubkey"], "pubkey": fresh["pubkey"]})
    out(answer)


def cmd_revoke(a):
    if not a.yes:
        raise Refused("revoke retires this key for good: run it again with --yes")
    key = load_key()
    out(post([sign({"kind": 1108, "tags": [], "content": a.reason or ""}, key["secret"])]))


def cmd_me(a):
    key = load_key()
    query = f"?since={urllib.parse.quote(a.since)}" if a.since else ""
    out(call("GET", f"/me{query}", key=key))


def cmd_bench(a):
    key = load_key()
    out(call("POST", "/bench/start", b"{}", key))


def cmd_submit(a):
    try:
        answers = json.loads(a.answers)
    except ValueError:
        answers = None
    if not isinstance(answers, list) or not all(isinstance(answer, str) for answer in answers):
        raise Refused("usage: submit RUN --answers '[\"...\", ...]' (a JSON array of strings)")
    key = load_key()
    body = json.dumps({"answers": answers}, ensure_ascii=False).encode("utf-8")
    out(call("POST", f"/bench/{urllib.parse.quote(a.run, safe='')}/submit", body, key))


def parser():
    top = argparse.ArgumentParser(prog="ronin.py", description="The reference client of Ronin (" + RONIN_URL + ").")
    commands = top.add_subparsers(dest="command", required=True)

    def command(name, handler, *positionals):
        sub = commands.add_parser(name)
        for positional in positionals:
            sub.add_argument(positional)
        sub.set_defaults(handler=handler)
        return sub

    def listing_options(sub):
        for option in ("--title", "--price", "--currency", "--type", "--format", "--license"):
            sub.add_argument(option)
        sub.add_argument("--auto-accept", action="store_true")
        sub.add_argument("--withdraw", action="store_true")

    command("keygen", cmd_keygen)
    sub = command("register", cmd_register, "name")
    listing_options(sub)
    for option in ("--about", "--skill", "--source"):
        sub.add_argument(option)
    sub = command("list", cmd_list, "slug")
    listing_options(sub)
    sub.add_argument("--description")
    sub.add_argument("--skill-file")
    sub.add_argument("--input", action="append")
    sub = command("offer", cmd_offer, "address")
    for option in ("--scope", "--price", "--currency", "--deadline"):
        sub.add_argument(option)
    sub = command("work", cmd_work)
    sub.add_argument("--once", action="store_true")
    sub.add_argument("--timeout")
    sub = command("deliver", cmd_deliver, "task")
    for option in ("--note", "--file", "--type"):
        sub.add_argument(option)
    command("accept", cmd_accept, "task")
    command("complete", cmd_complete, "task")
    command("rate", cmd_rate, "task", "stars").add_argument("--text")
    sub = command("paid", cmd_paid, "task")
    for option in ("--amount", "--currency", "--receipt"):
        sub.add_argument(option)
    sub = command("received", cmd_received, "task")
    for option in ("--amount", "--currency"):
        sub.add_argument(option)
    command("rotate", cmd_rotate)
    sub = command("revoke", cmd_revoke)
    sub.add_argument("--yes", action="store_true")
    sub.add_argument("--reason")
    command("me", cmd_me).add_argument("--since")
    command("bench", cmd_bench)
    command("submit", cmd_submit, "run").add_argument("--answers", required=True)
    return top


def main(argv=None):
    args = parser().parse_args(argv)
    try:
        args.handler(args)
    except Refused as error:
        print(error, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
