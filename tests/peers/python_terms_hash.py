#!/usr/bin/env python3
"""Independent check of KarmaDue's exact terms hash (kd-terms-v1; docs page "market").

Recomputes terms_hash with hashlib and a canonical JSON printer of its own (PostgreSQL
jsonb::text: object keys sorted by UTF-8 byte length, then bytewise; ", " and ": "; strings
escaped as PostgreSQL's escape_json does; integers as is), never the hub's code.

    python3 python_terms_hash.py --page docs/market.md        # the worked example
    python3 python_terms_hash.py --page http://hub/docs/market
    python3 python_terms_hash.py --proposal reply.json         # a get_proposal reply (data)
"""

import hashlib
import json
import re
import sys
import urllib.request

RECIPE = "kd-terms-v1"


def escape(text):
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\b":
            out.append("\\b")
        elif ch == "\f":
            out.append("\\f")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif code < 0x20:
            out.append("\\u%04x" % code)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def canonical(value):
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        raise ValueError("kd-terms-v1 terms hold integers only")
    if isinstance(value, str):
        return escape(value)
    if isinstance(value, list):
        return "[" + ", ".join(canonical(item) for item in value) + "]"
    keys = sorted(value, key=lambda key: (len(key.encode()), key.encode()))
    return "{" + ", ".join(escape(key) + ": " + canonical(value[key]) for key in keys) + "}"


def terms_text(proposal_id, listing_id, proposer_id, counterparty_id, terms):
    return "\n".join([RECIPE, proposal_id, listing_id, proposer_id, counterparty_id, canonical(terms)])


def terms_hash(*parts):
    return hashlib.sha256(terms_text(*parts).encode("utf-8")).hexdigest()


def read(source):
    if source.startswith("http://") or source.startswith("https://"):
        with urllib.request.urlopen(source) as reply:
            return reply.read().decode("utf-8")
    with open(source, encoding="utf-8") as handle:
        return handle.read()


def check_page(source):
    page = read(source)
    block = lambda name: re.search(r"<!-- %s -->\s*```[a-z]*\n(.*?)\n```" % name, page, re.S).group(1)
    ids = json.loads(block("example-ids"))
    terms = json.loads(block("example-terms"))
    printed_text = block("example-text")
    printed_hash = block("example-hash").strip()
    parts = (ids["proposal_id"], ids["listing_id"], ids["proposer_id"], ids["counterparty_id"], terms)
    assert terms_text(*parts) == printed_text, "the page's kd-terms-v1 text differs"
    assert terms_hash(*parts) == printed_hash, "the page's terms_hash differs"
    print("page example ok:", printed_hash)


def check_proposal(source):
    reply = json.loads(read(source))
    data = reply.get("data", reply)
    proposal = data.get("proposal", data)
    parts = (proposal["proposal_id"], proposal["listing_id"], proposal["proposer_id"],
             proposal["counterparty_id"], proposal["terms"])
    assert terms_hash(*parts) == proposal["terms_hash"], "the live terms_hash differs"
    print("live proposal ok:", proposal["terms_hash"])


if __name__ == "__main__":
    import os
    args = sys.argv[1:]
    if not args and os.environ.get("KD_HUB_URL"):
        args = ["--page", os.environ["KD_HUB_URL"] + "/functions/v1/docs/docs/market.md"]
    passed = failed = 0
    while args:
        flag, source = args[0], args[1]
        args = args[2:]
        try:
            {"--page": check_page, "--proposal": check_proposal}[flag](source)
            passed += 1
        except (AssertionError, KeyError, ValueError, AttributeError) as error:
            print("FAIL", flag, source, error)
            failed += 1
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
