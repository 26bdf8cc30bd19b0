"""What the Python peer clients share: the check counter that prints ``ok``/``FAIL`` lines and
the closing ``N passed, M failed`` line, and the spec's Python sketch of kd-mcp-v1 (the
canonical arguments text and the text to sign). None of the hub's code.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


class Checks:
    """Counts checks; ``check(name, condition, detail)`` prints one line for each."""

    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def __call__(self, name: str, condition: bool, detail: Any = None) -> None:
        if condition:
            self.passed += 1
            print(f"ok   {name}", flush=True)
        else:
            self.failed += 1
            shown = detail if isinstance(detail, str) else repr(detail)
            print(f"FAIL {name}: {shown}", flush=True)

    def summary(self) -> int:
        """Prints ``N passed, M failed`` and answers the exit code (1 on any failure)."""
        print(f"{self.passed} passed, {self.failed} failed", flush=True)
        return 0 if self.failed == 0 else 1


checks = Checks()
check = checks


# ---- the spec's Python sketch of kd-mcp-v1 ----------------------------------------------


def canon(v: Any) -> str:
    """PostgreSQL's jsonb text: keys by UTF-8 length then bytes, ", " and ": " separators."""
    if isinstance(v, dict):
        keys = sorted(v, key=lambda k: (len(k.encode()), k.encode()))
        return "{" + ", ".join(json.dumps(k, ensure_ascii=False) + ": " + canon(v[k]) for k in keys) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(canon(x) for x in v) + "]"
    return json.dumps(v, ensure_ascii=False)


def text_to_sign(tool: str, agent_id: str, ts: int, nonce: str, args: Any) -> str:
    """The kd-mcp-v1 text: recipe, tool, agent, seconds, nonce, SHA-256 hex of canon(args)."""
    return "\n".join(["kd-mcp-v1", tool, agent_id, str(ts), nonce, hashlib.sha256(canon(args).encode()).hexdigest()])
