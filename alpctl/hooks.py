"""Hooks the runtimes call back into: `alp hook session-start`.

Claude Code runs it (installed per run through `--settings`) when a session starts or, as
we install it, after it compacts: the hook answers with the run's `session-context.md` as
`additionalContext`, so the thread's work state is back in the conversation the moment the
runtime's own summary replaced it. It reads one local file and talks to no daemon: a hook
must be fast and must not fail the runtime.
"""

from __future__ import annotations

import json
import os

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO


def session_start(stdin: IO[str], environ: dict[str, str] | os._Environ[str]) -> str:
    """The hook's stdout: `hookSpecificOutput.additionalContext`, or nothing to add."""
    try:
        event = json.loads(stdin.read() or "{}")
    except ValueError:
        event = {}
    path = environ.get("ALP_SESSION_CONTEXT")
    if not path:
        return ""
    try:
        with open(path, encoding="utf-8") as f:
            context = f.read()
    except OSError:
        return ""
    source = event.get("source") if isinstance(event, dict) else None
    header = "The conversation was compacted; the thread's work state follows.\n\n"
    text = (header if source == "compact" else "") + context
    output = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}
    return json.dumps(output, ensure_ascii=False)
