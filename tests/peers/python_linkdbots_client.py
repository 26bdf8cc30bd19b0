"""Peer test: a Linkdbots leaderboard recomputed independently from the bundled Aider rows and
compared with the hub's GET /linkdbots/api/v1/benchmarks/{category} answer.

    KD_HUB_BIN=target/release/karmadue python3 tests/peers/python_linkdbots_client.py

Plain Python 3 (standard library only). It makes a throwaway data folder, runs
`karmadue linkdbots import` there (the bundled rows), starts a hub on it (port 0, read back from
the banner), and for `code.feature` and `code.refactor` recomputes, from
data/linkdbots/aider-costs.jsonl.gz and docs/decisions.md 203, 204 and 335 alone (and for
`code.bugfix`, from a SWE-bench-shaped file it writes and imports, and decision 344):

1. the rows (model, engine, host) and their card counts after outliers;
2. per row: successes, success rate, "outcome known on N of M cards", $ and tokens per
   successful run (null when there are none or under 5), and the median cost;
3. the category summary and the excluded counts.

Prints one line per check and, last, exactly ``N passed, M failed``; exits 1 on any failure.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import defaultdict
from peer_checks import check, checks

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "data" / "linkdbots" / "aider-costs.jsonl.gz"
HUB_BIN = os.environ.get("KD_HUB_BIN", str(ROOT / "target" / "release" / "karmadue"))
ALPHABET = re.compile(r"[A-Za-z0-9._:+/-]")


def identifier(text: str, limit: int) -> str:
    mapped = "".join(c if ALPHABET.fullmatch(c) else "-" for c in text)[:limit]
    return mapped or "unknown"


def half_up(x: float) -> int:
    """Rust's f64::round for a non-negative number (Python's round() rounds half to even)."""
    return math.floor(x + 0.5)


def share(total: int, n: int, i: int) -> int:
    return total // n + (1 if i < total % n else 0)


def cards_of(row: dict) -> list[dict]:
    """decision 204: one card per exercise, the run's totals split evenly in whole units."""
    cases = row["test_cases"]
    passes = None
    for tries in ("2", "1"):
        if row.get(f"pass_num_{tries}") is not None:
            passes = row[f"pass_num_{tries}"]
        elif row.get(f"pass_rate_{tries}") is not None:
            passes = half_up(row[f"pass_rate_{tries}"] * cases / 100)
        if passes is not None:
            break
    passes = max(0, min(passes, cases))
    # A published total of 0 is a cost nobody recorded: unknown (decision 335).
    cost = None if not row.get("total_cost") else half_up(row["total_cost"] * 1_000_000)
    prompt, completion = row.get("prompt_tokens"), row.get("completion_tokens")
    category = "code.refactor" if row["leaderboard"] == "refactor_leaderboard" else "code.feature"
    key = (
        identifier(row["model"], 80),
        identifier("aider/" + (row.get("edit_format") or "unknown"), 40),
        identifier("aider-bench:" + row["leaderboard"], 40),
    )
    out = []
    for i in range(cases):
        tokens = None
        if prompt is not None and completion is not None:
            tokens = share(prompt, cases, i) + share(completion, cases, i)
        out.append(
            {
                "category": category,
                "key": key,
                "cost": None if cost is None else share(cost, cases, i),
                "tokens": tokens,
                "success": i < passes,
            }
        )
    return out


def median(values: list[float]) -> float | None:
    if not values:
        return None
    values = sorted(values)
    mid = len(values) // 2
    return float(values[mid]) if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def fence(values: list[int]) -> int | None:
    """decision 203: max(Q3 + 3 IQR, 2 x median) with at least 8 values."""
    if len(values) < 8:
        return None
    values = sorted(values)
    n = len(values)
    q1, q3 = values[(n - 1) // 4], values[3 * (n - 1) // 4]
    twice_median = 2 * values[n // 2] if n % 2 else values[n // 2 - 1] + values[n // 2]
    return max(q3 + 3 * (q3 - q1), twice_median)


def drop_outliers(cards: list[dict]) -> list[dict]:
    cost_fence = fence([c["cost"] for c in cards if c["cost"] is not None])
    token_fence = fence([c["tokens"] for c in cards if c["tokens"] is not None])

    def above(value, limit):
        return value is not None and limit is not None and value > limit

    return [c for c in cards if not above(c["cost"], cost_fence) and not above(c["tokens"], token_fence)]


def per_success(cards: list[dict], figure: str) -> float | None:
    carrying = [c for c in cards if c[figure] is not None]
    successes = sum(1 for c in carrying if c["success"])
    if len(carrying) < 5 or successes == 0:
        return None
    return sum(c[figure] for c in carrying) / successes


def figures(cards: list[dict]) -> dict:
    n = len(cards)
    successes = sum(1 for c in cards if c["success"])
    derived = n >= 5
    cost = per_success(cards, "cost") if derived else None
    return {
        "cards": n,
        "successes": successes,
        "coverage": f"outcome known on {n} of {n} cards",
        "successRate": successes / n if derived else None,
        "costPerSuccessUsd": None if cost is None else cost / 1_000_000,
        "tokensPerSuccess": per_success(cards, "tokens") if derived else None,
        "medianCost": None
        if median([c["cost"] for c in cards if c["cost"] is not None]) is None
        else median([c["cost"] for c in cards if c["cost"] is not None]) / 1_000_000,
    }


def close(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))


def start_hub(data: pathlib.Path) -> tuple[subprocess.Popen, str]:
    log = open(data / "hub.log", "w")
    env = dict(os.environ, KARMADUE_LOG="warn")
    hub = subprocess.Popen(
        [HUB_BIN, "serve", "--listen", "127.0.0.1:0", "--data-dir", str(data), "--bundled-catalog", "false"],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    for _ in range(1800):
        text = (data / "hub.log").read_text()
        found = re.search(r"^KarmaDue hub listening on 127\.0\.0\.1:(\d+)", text, re.M)
        if found:
            return hub, f"http://127.0.0.1:{found.group(1)}"
        if hub.poll() is not None:
            break
        time.sleep(0.1)
    hub.kill()
    raise SystemExit(f"the hub did not start:\n{(data / 'hub.log').read_text()}")


def get(url: str) -> dict:
    for _ in range(50):
        try:
            with urllib.request.urlopen(url, timeout=30) as response:
                return json.load(response)
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"no answer from {url}")


def swebench_card(row: dict) -> dict:
    """decision 344: one code.bugfix card per task, model and engine read from the folder."""
    day, rest = row["folder"].split("_", 1)
    version, model = re.fullmatch(r"mini-v([0-9.]+)[_-](.+)", rest).groups()
    return {
        "category": "code.bugfix",
        "key": (
            identifier(model, 80),
            identifier("mini-swe-agent/" + version, 40),
            identifier("swe-bench:" + row["leaderboard"], 40),
        ),
        "cost": half_up(row["cost"] * 1_000_000),
        "tokens": None,
        "success": row["resolved"],
    }


def swebench_rows() -> list[dict]:
    """A file in the shape of agent-costs-swebench-instances.jsonl (CC-BY-NC-4.0, so not
    bundled): made-up runs, seeded, with a few costly tasks for the outlier rule."""
    import random

    rng = random.Random(344)
    rows = []
    for run, (folder, rate) in enumerate(
        [
            ("20251124_mini-v1.16.0_claude-opus-4-5-20251101", 0.7),
            ("20251120_mini-v1.15.0_gpt-5.1-2025-11-13", 0.6),
            ("20250720_mini-v0.0.0-Llama-4-Maverick-17B-Instruct", 0.2),
            ("20250807_mini-v1.7.0_gpt-5-nano", 0.0),
            ("20251201_mini-v1.17.1_glm-4.6", 0.5),
        ]
    ):
        tasks = 3 if run == 4 else 60
        for task in range(tasks):
            cost = rng.uniform(0.05, 1.5) * (40 if rng.random() < 0.05 else 1)
            rows.append(
                {
                    "leaderboard": "bash-only",
                    "folder": folder,
                    "name": folder.rsplit("_", 1)[-1],
                    "instance_id": f"repo__repo-{task}",
                    "api_calls": rng.randint(5, 80),
                    "cost": cost,
                    "resolved": rng.random() < rate,
                    "source": "SWE-bench/swe-bench.github.io:data/leaderboards.json@f1176b65ae29",
                }
            )
    return rows


def compare(url: str, category: str, cards_in: list[dict]) -> None:
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for card in cards_in:
        if card["category"] == category:
            groups[card["key"]].append(card)
    board = get(f"{url}/linkdbots/api/v1/benchmarks/{category}")
    answered = {(r["model"], r["engine"], r["host"]): r for r in board["rows"]}
    check(f"{category}: the same rows", set(answered) == set(groups), f"{len(answered)} vs {len(groups)}")
    kept_all: list[dict] = []
    outliers = 0
    for key, cards in sorted(groups.items()):
        kept = drop_outliers(cards)
        outliers += len(cards) - len(kept)
        kept_all.extend(kept)
        mine, theirs = figures(kept), answered.get(key, {})
        bad = [
            name
            for name in ("cards", "successes", "coverage")
            if mine[name] != theirs.get(name)
        ] + [
            name
            for name in ("successRate", "costPerSuccessUsd", "tokensPerSuccess")
            if not close(theirs.get(name), mine[name])
        ]
        if not close(theirs.get("medians", {}).get("costUsd"), mine["medianCost"]):
            bad.append("medians.costUsd")
        check(f"{category}: {'/'.join(key)}", not bad, f"differs in {bad}: {theirs} vs {mine}")
    summary, mine = board["summary"], figures(kept_all)
    check(
        f"{category}: the summary",
        summary["cards"] == mine["cards"]
        and summary["successes"] == mine["successes"]
        and close(summary["costPerSuccessUsd"], mine["costPerSuccessUsd"]),
        f"{summary} vs {mine}",
    )
    check(f"{category}: outliers excluded", board["window"]["outliersExcluded"] == outliers)
    check(f"{category}: no digests", board["window"]["digestsExcluded"] == 0)


def main() -> int:
    rows = [json.loads(line) for line in gzip.open(BUNDLED, "rt")]
    check("the bundled file holds the 324 Aider rows", len(rows) == 324, str(len(rows)))
    with tempfile.TemporaryDirectory(prefix="kd-linkdbots-peer.") as folder:
        data = pathlib.Path(folder)
        imported = subprocess.run(
            [HUB_BIN, "linkdbots", "import", "--data-dir", str(data)],
            capture_output=True,
            text=True,
        )
        cases = sum(row["test_cases"] for row in rows)
        check(
            "karmadue linkdbots import",
            imported.returncode == 0 and f"{cases} cards imported" in imported.stdout,
            imported.stdout + imported.stderr,
        )
        swebench = swebench_rows()
        supplied = data / "swebench-instances.jsonl"
        supplied.write_text("".join(json.dumps(row) + "\n" for row in swebench))
        imported = subprocess.run(
            [HUB_BIN, "linkdbots", "import", "--data-dir", str(data), str(supplied)],
            capture_output=True,
            text=True,
        )
        check(
            "karmadue linkdbots import FILE (SWE-bench task rows)",
            imported.returncode == 0 and f"{len(swebench)} cards imported" in imported.stdout,
            imported.stdout + imported.stderr,
        )
        hub, url = start_hub(data)
        try:
            aider = [card for row in rows for card in cards_of(row)]
            for category in ("code.refactor", "code.feature"):
                compare(url, category, aider)
            compare(url, "code.bugfix", [swebench_card(row) for row in swebench])
            board = get(f"{url}/linkdbots/api/v1/benchmarks/code.bugfix")
            nano = [r for r in board["rows"] if r["model"] == "gpt-5-nano"]
            check(
                "code.bugfix: a run that never succeeded has 0% and no cost per success",
                len(nano) == 1 and nano[0]["successRate"] == 0 and nano[0]["costPerSuccessUsd"] is None,
                str(nano),
            )
        finally:
            hub.terminate()
            hub.wait(timeout=30)
    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
