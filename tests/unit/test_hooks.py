"""`alp hook session-start` answers the runtimes' SessionStart hook contract."""

from __future__ import annotations

import io
import json
from pathlib import Path

from alpctl.hooks import session_start


def test_session_start_hook_reinjects_session_context_after_compaction(tmp_path: Path) -> None:
    context = tmp_path / "session-context.md"
    context.write_text("# work state, not authority\n\n- decision: use sqlite\n")
    event = json.dumps({"hook_event_name": "SessionStart", "source": "compact"})
    out = json.loads(session_start(io.StringIO(event), {"ALP_SESSION_CONTEXT": str(context)}))
    hook = out["hookSpecificOutput"]
    assert hook["hookEventName"] == "SessionStart"
    assert "compacted" in hook["additionalContext"]
    assert hook["additionalContext"].endswith(context.read_text())


def test_session_start_hook_is_silent_outside_a_run() -> None:
    assert session_start(io.StringIO("{}"), {}) == ""


def test_session_start_hook_tolerates_garbage_input(tmp_path: Path) -> None:
    context = tmp_path / "c.md"
    context.write_text("x")
    out = session_start(io.StringIO("not json"), {"ALP_SESSION_CONTEXT": str(context)})
    assert json.loads(out)["hookSpecificOutput"]["additionalContext"] == "x"
