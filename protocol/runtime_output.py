"""A runtime's own error in what a run printed: shared by the daemon (a failed run's report
leads with it) and the client (`--follow`, `alp execution logs`).

Stdlib only (the thin client imports it), pure: text in, text out. What counts as the
runtime's error line, in order:

1. the last JSON event that says the run failed: Claude's `result` with `is_error` or a
   subtype other than `success` (its `result` text: `Not logged in · Please run /login`),
   Codex's `error` event (`message`) and `turn.failed` (`error.message`);
2. else the last plain (non-JSON) line that says `error` or `not logged in` — stderr text of
   a runtime that failed before it could write events.

The line is flattened to one line of at most `ERROR_LINE_CHARS` characters.
"""

from __future__ import annotations

import json

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

#: characters of an error line at most
ERROR_LINE_CHARS: Final = 300


def one_line(text: str, limit: int) -> str:
    """`text` on one line (runs of whitespace as one space), at most `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def event_of(line: str) -> dict[str, Any] | None:
    """The JSON object a line holds (None: not one)."""
    stripped = line.strip()
    if not stripped.startswith("{"):
        return None
    try:
        event = json.loads(stripped)
    except ValueError:
        return None
    return event if isinstance(event, dict) else None


def runtime_error(event: dict[str, Any]) -> str | None:
    """The runtime's own error line from one event (rule 1), or None."""
    kind = event.get("type")
    if kind == "result" and (event.get("is_error") or event.get("subtype", "success") != "success"):
        text = event.get("result") or event.get("error") or event.get("subtype")
        return one_line(str(text), ERROR_LINE_CHARS) if text else None
    if kind == "error":
        return one_line(str(event.get("message", "")), ERROR_LINE_CHARS) or None
    if kind == "turn.failed":
        error = event.get("error") or {}
        text = error.get("message") if isinstance(error, dict) else error
        return one_line(str(text or ""), ERROR_LINE_CHARS) or None
    return None


def first_error_line(output: str) -> str | None:
    """The runtime's own error in a run's output (module docstring), or None."""
    found: str | None = None
    plain: str | None = None
    for line in output.splitlines():
        event = event_of(line)
        if event is not None:
            found = runtime_error(event) or found
            continue
        lowered = line.lower()
        if "error" in lowered or "not logged in" in lowered:
            plain = one_line(line, ERROR_LINE_CHARS)
    return found or plain


__all__ = ["ERROR_LINE_CHARS", "event_of", "first_error_line", "one_line", "runtime_error"]
