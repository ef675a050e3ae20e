"""Building Claude Code and Codex transcripts for history tests, line by line.

The lines carry only the fields the readers use (see alpd/domain/history/transcripts); the real
CLIs' files are in tests/fixtures/runtimes.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "runtimes"

# Entry counts per fixture session, as the reader tests count them (tests/unit).
CLAUDE_COUNTS = {
    "e3d6ce56-3460-480d-999d-16439ea442fb": 2,
    "56bf1e88-8a2d-41d1-9af3-d8bdf9f2b950": 2,
    "5c8d6878-df77-4e19-930e-dfb3c1a2404b": 5,
    "8740e209-5d4c-48dd-847c-259f4320371b": 5,
    "309e4ccb-5605-4b32-9dad-ceb89986512e": 5,
    "d2b9855f-6a65-498b-9a15-10cbe5c9c069": 7,
    "4a3bca85-6ad3-4d20-b8bb-637e07fbaa03": 11,
    "b03e2c91-e83c-44e4-aad7-6394cb451865": 7,
    "c48e191a-e33c-4274-9056-08252b309aff": 2,
}
CODEX_COUNTS = {
    "01a22af8-b6c1-72c2-a5ed-92afebc8ada1": 2,
    "01a22af8-b7cc-7c33-825d-7962c4e1a179": 6,
    "01a22af8-bacd-7f23-88a7-5634ea48a7af": 4,
    "01a22af8-bcc7-7cf0-991c-67ab8d3d6cb1": 4,
    "01a22af8-be10-74f1-b2fe-ec01938cb73d": 4,
    "01a22af8-c0b6-79e2-8da9-09e30bef4018": 2,
}
CLAUDE_FORK = "4a3bca85-6ad3-4d20-b8bb-637e07fbaa03"
CODEX_FORK = "01a22af8-bacd-7f23-88a7-5634ea48a7af"


def line(record: dict[str, Any]) -> bytes:
    return json.dumps(record, ensure_ascii=False).encode() + b"\n"


class Claude:
    """Lines of one Claude Code session."""

    def __init__(self, session: str | None = None, ts: str = "2026-11-30T05:00:00.000Z") -> None:
        self.session = session or str(uuid.uuid4())
        self.ts = ts

    def _base(self, kind: str, message: dict[str, Any], ts: str | None) -> dict[str, Any]:
        return {
            "type": kind,
            "uuid": str(uuid.uuid4()),
            "sessionId": self.session,
            "timestamp": ts or self.ts,
            "message": message,
        }

    def prompt(self, text: str, ts: str | None = None) -> bytes:
        return line(self._base("user", {"role": "user", "content": text}, ts))

    def reply(self, text: str, ts: str | None = None) -> bytes:
        message = {
            "model": "claude-sonnet-test",
            "content": [{"type": "text", "text": text}],
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
        return line(self._base("assistant", message, ts))

    def tool_call(self, name: str, tool_input: dict[str, Any], call_id: str) -> bytes:
        block = {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}
        return line(
            self._base("assistant", {"model": "claude-sonnet-test", "content": [block]}, None)
        )

    def tool_result(self, output: str, call_id: str) -> bytes:
        block = {"type": "tool_result", "tool_use_id": call_id, "content": output}
        return line(self._base("user", {"role": "user", "content": [block]}, None))


class Codex:
    """Lines of one Codex rollout."""

    def __init__(self, session: str | None = None) -> None:
        self.session = session or str(uuid.uuid4())
        self.n = 0

    def _item(self, payload: dict[str, Any]) -> bytes:
        self.n += 1
        return line(
            {
                "timestamp": "2026-11-30T05:00:00.000Z",
                "ordinal": self.n,
                "type": "response_item",
                "payload": payload,
            }
        )

    def meta(self) -> bytes:
        self.n += 1
        return line(
            {
                "timestamp": "2026-11-30T05:00:00.000Z",
                "ordinal": self.n,
                "type": "session_meta",
                "payload": {"id": self.session},
            }
        )

    def prompt(self, text: str) -> bytes:
        content = [{"type": "input_text", "text": text}]
        return self._item(
            {"type": "message", "role": "user", "id": f"msg_{uuid.uuid4().hex}", "content": content}
        )

    def reply(self, text: str) -> bytes:
        content = [{"type": "output_text", "text": text}]
        return self._item(
            {
                "type": "message",
                "role": "assistant",
                "id": f"msg_{uuid.uuid4().hex}",
                "content": content,
            }
        )

    def tool_call(self, arguments: dict[str, Any], call_id: str) -> bytes:
        return self._item(
            {
                "type": "function_call",
                "id": f"fc_{uuid.uuid4().hex}",
                "name": "shell",
                "arguments": json.dumps(arguments),
                "call_id": call_id,
            }
        )

    def tool_result(self, output: str, call_id: str) -> bytes:
        return self._item(
            {
                "type": "function_call_output",
                "id": f"fco_{uuid.uuid4().hex}",
                "call_id": call_id,
                "output": output,
            }
        )

    def path_in(self, root: Path) -> Path:
        directory = root / "2026" / "11" / "30"
        directory.mkdir(parents=True, exist_ok=True)
        return directory / f"rollout-2026-11-30T05-00-00-{self.session}.jsonl"


def db(home: Path) -> sqlite3.Connection:
    """A read connection to the daemon's database (WAL: sees what alpd committed)."""
    conn = sqlite3.connect(f"file:{home / 'alp.db'}?mode=ro", uri=True, timeout=10)
    conn.row_factory = sqlite3.Row
    return conn


def write_db(home: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(home / "alp.db", timeout=10, isolation_level=None)
    conn.row_factory = sqlite3.Row
    return conn


def entry_counts(home: Path) -> dict[str, tuple[int, str | None, int]]:
    """native session id → (entries, history level, skipped) of every execution."""
    with db(home) as conn:
        rows = conn.execute(
            "SELECT e.native_session_id AS session, e.history_level AS level, "
            "e.history_skipped AS skipped, (SELECT count(*) FROM history_entries h "
            "WHERE h.execution_id = e.id) AS entries FROM executions e"
        ).fetchall()
    return {r["session"]: (r["entries"], r["level"], r["skipped"]) for r in rows}
