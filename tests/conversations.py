"""A long Claude Code session for the conversation view's tests: written as Claude Code writes
its transcript (the fields alp's reader uses), imported with `history/import` and adopted
into a thread, so a thread of a thousand items exists in a second, without running a model.

Each turn is four lines: the person's prompt, a reply in Markdown with a code block, a Bash
tool call and its (long) result: three transcript items (the call carries its result).
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from alpd.testing.daemon import DaemonProcess

#: the reply of every turn: Markdown a page must render safely, a fenced block it must keep
REPLY = (
    "Turn {n}: **done**, see `app.py`.\n\n"
    "```python\nprint('<b>turn {n}</b>')\n```\n\n"
    "- checked the tests\n- <script>alert({n})</script> stays text"
)
#: a tool result long enough to be folded and shortened (history keeps its last 2 KiB)
RESULT = "\n".join(f"line {i} of the build output" for i in range(60))


def _line(session: str, cwd: Path, at: datetime, kind: str, message: dict[str, Any]) -> str:
    record = {
        "type": kind,
        "uuid": str(uuid.uuid4()),
        "sessionId": session,
        "timestamp": at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "cwd": str(cwd),
        "message": message,
    }
    return json.dumps(record) + "\n"


def write_session(folder: Path, turns: int, cwd: Path) -> str:
    """A session of `turns` turns in `folder` (made if missing); its id."""
    folder.mkdir(parents=True, exist_ok=True)
    session = str(uuid.uuid4())
    start = datetime.now(UTC) - timedelta(seconds=4 * turns + 60)
    lines: list[str] = []
    for n in range(1, turns + 1):
        at = start + timedelta(seconds=4 * n)
        call = f"toolu_{n:06d}"
        text = REPLY.format(n=n)
        reply = {"model": "claude-test", "content": [{"type": "text", "text": text}]}
        use = {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": f"make {n}"}}
        result = {"type": "tool_result", "tool_use_id": call, "content": RESULT}
        call_message = {"model": "claude-test", "content": [use]}
        result_message = {"role": "user", "content": [result]}
        lines += [
            _line(session, cwd, at, "user", {"role": "user", "content": f"please do step {n}"}),
            _line(session, cwd, at + timedelta(seconds=1), "assistant", reply),
            _line(session, cwd, at + timedelta(seconds=2), "assistant", call_message),
            _line(session, cwd, at + timedelta(seconds=3), "user", result_message),
        ]
    (folder / f"{session}.jsonl").write_text("".join(lines))
    return session


def adopted_thread(d: DaemonProcess, folder: Path, turns: int, cwd: Path, title: str) -> str:
    """A thread whose root #1 is a new session of `turns` turns; its id."""
    session = write_session(folder, turns, cwd)
    d.call("history/import", {"runtime": "claude", "path": str(folder)})
    adopted = d.call("thread/adopt", {"sessionId": session, "title": title})
    assert isinstance(adopted, dict)
    return str(adopted["threadId"])
