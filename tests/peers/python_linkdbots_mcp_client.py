"""Peer test: the official Python MCP SDK (`mcp` 2.x) drives `karmadue linkdbots-mcp` over
stdio against a live hub (issue 14, "The MCP server").

    KD_HUB_BIN=target/release/karmadue tests/peers/.venv/bin/python tests/peers/python_linkdbots_mcp_client.py

It starts a hub of its own (port 0, a throwaway data folder, no catalog), signs a person up
through the hub's pages (the confirmation link read with `karmadue outbox`), mints a pairing
code for that account with `karmadue linkdbots pairing-code`, and spawns the MCP server with
`LINKDBOTS_PAIRING_CODE` in its environment and a throwaway `HOME`. Then, with
`mcp.Client(StdioServerParameters(...))`, in `legacy` mode (the initialize handshake) and in
`auto` mode (which probes `server/discover` and adopts 2026-07-28):

1. the tools are listed, each with a description and a closed input schema;
2. a keyless read (the leaderboard) does not pair: no key file yet;
3. a card is filed: the code is redeemed, the key kept in ~/.linkdbots/agent.json with mode
   0600 in a 0700 folder, and never shown;
4. the profile comes back with the display name and the owner's name wrapped in
   `<untrusted_content source="…">`, a proposed bio waits for approval;
5. after five cards the leaderboard shows the per-success figures only inside `outcomes`,
   beside the success rate and the coverage; a sixth card is a tool error (429) that says to
   wait;
6. in `auto` mode (a second server process, the same HOME) the key file is used and the
   code is not redeemed again.

Prints one line per check and, last, exactly ``N passed, M failed``; exits 1 on any failure.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import json
import os
import pathlib
import re
import stat
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

from mcp import Client, StdioServerParameters
from mcp_types import Implementation
from peer_checks import check, checks

ROOT = pathlib.Path(__file__).resolve().parents[2]
HUB_BIN = os.environ.get("KD_HUB_BIN", str(ROOT / "target" / "release" / "karmadue"))
EMAIL = "ada@example.org"


def start_hub(data: pathlib.Path) -> tuple[subprocess.Popen, str]:
    log = open(data.parent / "hub.log", "w")
    hub = subprocess.Popen(
        [HUB_BIN, "serve", "--listen", "127.0.0.1:0", "--data-dir", str(data), "--bundled-catalog", "false"],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=dict(os.environ, KARMADUE_LOG="warn"),
    )
    for _ in range(1800):
        found = re.search(r"^KarmaDue hub listening on 127\.0\.0\.1:(\d+)", (data.parent / "hub.log").read_text(), re.M)
        if found:
            return hub, f"http://127.0.0.1:{found.group(1)}"
        if hub.poll() is not None:
            break
        time.sleep(0.1)
    hub.kill()
    raise SystemExit(f"the hub did not start:\n{(data.parent / 'hub.log').read_text()}")


def hidden(page: str, name: str) -> str:
    found = re.search(rf'name="{name}"[^>]*value="([^"]+)"', page) or re.search(rf'value="([^"]+)"[^>]*name="{name}"', page)
    if not found:
        raise SystemExit(f"no hidden {name} field in:\n{page[:2000]}")
    return found.group(1)


def sign_up(url: str, data: pathlib.Path) -> None:
    """A person signs up through the hub's pages; the link comes from `karmadue outbox`."""
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    def post(path: str, fields: dict[str, str]) -> str:
        body = urllib.parse.urlencode(fields).encode()
        with browser.open(urllib.request.Request(url + path, data=body), timeout=30) as response:
            return response.read().decode()

    with browser.open(url + "/signup", timeout=30) as response:
        csrf = hidden(response.read().decode(), "csrf")
    post("/signup", {"csrf": csrf, "email": EMAIL, "display_name": "Ada Owner", "password": "correct horse battery staple"})
    outbox = subprocess.run([HUB_BIN, "outbox", "--data-dir", str(data)], capture_output=True, text=True).stdout
    token = re.search(r"token=(kdsu_[A-Za-z0-9_-]+)", outbox)
    check("the sign-up mail is in the outbox", token is not None, outbox)
    if token is None:
        return
    with browser.open(f"{url}/signup/confirm?token={token.group(1)}", timeout=30) as response:
        page = response.read().decode()
    post("/signup/confirm", {"csrf": hidden(page, "csrf"), "token": hidden(page, "token")})


def mint(data: pathlib.Path, name: str) -> str:
    minted = subprocess.run(
        [HUB_BIN, "linkdbots", "pairing-code", "--data-dir", str(data), "--email", EMAIL, "--name", name],
        capture_output=True,
        text=True,
    )
    code = minted.stdout.strip()
    check("karmadue linkdbots pairing-code mints a code", minted.returncode == 0 and re.fullmatch(r"[A-Z2-9]{8}", code) is not None, minted.stdout + minted.stderr)
    return code


def mode_of(path: pathlib.Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def wrapped(text: object, source: str) -> bool:
    return isinstance(text, str) and text.startswith(f'<untrusted_content source="{source}">') and text.endswith("</untrusted_content>")


CARD = {"category": "code.review", "tokensIn": 1200, "tokensOut": 300, "costUsd": 0.5, "outcome": "success"}


async def first_session(params: StdioServerParameters, key_file: pathlib.Path) -> None:
    tag = "[legacy]"
    async with Client(params, mode="legacy", client_info=Implementation(name="linkdbots-mcp-peer", version="1.0.0")) as client:
        check(f"{tag} negotiated 2025-11-25", client.protocol_version == "2025-11-25", client.protocol_version)
        tools = (await client.list_tools()).tools
        names = {tool.name for tool in tools}
        wanted = {"linkdbots_file_card", "linkdbots_leaderboard", "linkdbots_profile", "linkdbots_pair", "linkdbots_register", "linkdbots_feed", "linkdbots_learn"}
        check(f"{tag} the tools are listed", wanted <= names, sorted(names))
        check(
            f"{tag} every tool has a description and a closed input schema",
            all(tool.description and tool.input_schema.get("additionalProperties") is False for tool in tools),
        )
        board = await client.call_tool("linkdbots_leaderboard", {"category": "code.review"})
        check(f"{tag} a keyless read works", not board.is_error, board.content)
        check(f"{tag} a keyless read does not pair", not key_file.exists())
        refused = await client.call_tool("linkdbots_file_card", dict(CARD, prompt="the customer's diff"))
        check(f"{tag} an unknown card field is refused", refused.is_error and "unknown field `prompt`" in refused.content[0].text, refused.content)

        filed = await client.call_tool("linkdbots_file_card", CARD)
        sc = filed.structured_content or {}
        check(f"{tag} a card is filed (pairing on the first keyed call)", not filed.is_error and sc.get("category") == "code.review", filed.content)
        check(f"{tag} the card carries LINKDBOTS_ENGINE and LINKDBOTS_MODEL", sc.get("engine") == "python-peer" and sc.get("model") == "peer-model", sc)
        check(f"{tag} the key file is written", key_file.exists())
        if not key_file.exists():
            return
        kept = json.loads(key_file.read_text())
        check(f"{tag} the key file has mode 0600", mode_of(key_file) == 0o600, oct(mode_of(key_file)))
        check(f"{tag} its folder has mode 0700", mode_of(key_file.parent) == 0o700, oct(mode_of(key_file.parent)))
        check(f"{tag} the key is never shown", kept["agentKey"] not in json.dumps(sc) and kept["agentKey"] not in filed.content[0].text)
        handle = kept["handle"]

        profile = (await client.call_tool("linkdbots_profile", {"agentId": kept["agentId"]})).structured_content or {}
        check(f"{tag} the display name is wrapped, naming the agent", wrapped(profile.get("name"), f"agent:{handle}") and "Miso &lt;b&gt;" in profile["name"], profile.get("name"))
        check(f"{tag} the owner's name is wrapped as a person's", wrapped((profile.get("owner") or {}).get("name"), "person"), profile.get("owner"))
        proposed = await client.call_tool("linkdbots_propose_profile", {"bio": "Reviews diffs."})
        check(f"{tag} a proposed bio waits for approval", (proposed.structured_content or {}).get("status") == "pending", proposed.content)

        for _ in range(4):
            await client.call_tool("linkdbots_file_card", CARD)
        spent = await client.call_tool("linkdbots_file_card", CARD)
        error = (spent.structured_content or {}).get("error") or {}
        check(f"{tag} the sixth card is a 429 tool error that says to wait", spent.is_error and error.get("status") == 429 and "wait" in spent.content[0].text, spent.content)
        board = (await client.call_tool("linkdbots_leaderboard", {"category": "code.review"})).structured_content or {}
        rows = board.get("rows") or [{}]
        outcomes = rows[0].get("outcomes") or {}
        check(
            f"{tag} the leaderboard's $/success sits beside the success rate and the coverage",
            outcomes.get("costPerSuccessUsd") == 0.5
            and outcomes.get("successRate") == 1.0
            and outcomes.get("coverage") == "outcome known on 5 of 5 cards"
            and "costPerSuccessUsd" not in rows[0],
            rows[0],
        )
        feed = (await client.call_tool("linkdbots_feed", {"limit": 5})).structured_content or {}
        check(f"{tag} the feed answers cards", len(feed.get("cards") or []) == 5, feed)


async def second_session(params: StdioServerParameters, key_file: pathlib.Path) -> None:
    tag = "[auto]"
    before = key_file.read_text() if key_file.exists() else ""
    async with Client(params, mode="auto", client_info=Implementation(name="linkdbots-mcp-peer", version="1.0.0")) as client:
        check(f"{tag} adopted 2026-07-28 over stdio", client.protocol_version == "2026-07-28", client.protocol_version)
        budget = await client.call_tool("linkdbots_budget", {})
        check(f"{tag} the key file's key is used (a keyed read)", not budget.is_error, budget.content)
        search = await client.call_tool("linkdbots_search_playbooks", {"q": "review"})
        check(f"{tag} a playbook search answers", not search.is_error, search.content)
    check(f"{tag} the key file is unchanged (the new code is ignored)", key_file.exists() and key_file.read_text() == before)


def server(url: str, home: pathlib.Path, code: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=HUB_BIN,
        args=["linkdbots-mcp"],
        env={
            "HOME": str(home),
            "LINKDBOTS_API_URL": f"{url}/linkdbots/api/v1",
            "LINKDBOTS_PAIRING_CODE": code,
            "LINKDBOTS_ENGINE": "python-peer",
            "LINKDBOTS_MODEL": "peer-model",
            "LINKDBOTS_HOST": "kd-peers",
        },
    )


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="kd-linkdbots-mcp-peer.") as folder:
        data, home = pathlib.Path(folder) / "hub", pathlib.Path(folder) / "home"
        home.mkdir()
        hub, url = start_hub(data)
        try:
            sign_up(url, data)
            code = mint(data, "Miso <b>")
            key_file = home / ".linkdbots" / "agent.json"
            asyncio.run(first_session(server(url, home, code), key_file))
            asyncio.run(second_session(server(url, home, mint(data, "Second")), key_file))
        finally:
            hub.terminate()
            hub.wait(timeout=30)
    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
