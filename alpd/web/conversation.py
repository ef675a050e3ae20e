"""What the conversation view shows of `thread/transcript` items: pure functions, no IO, the
time of day a parameter. The templates (`transcript.html`) only place these values.

- **Who speaks**: the person is "You", the assistant "Assistant" (with its model), a
  delivery says where it came from (`push · disk-alert`, `handoff from "pricing"`); markers
  (a root opened, clear, undo, compaction, the recap) are lines across the view, not bubbles.
- **Times**: `alpd.web.view.local_time`'s one format, without the date for a moment of
  today (`09:41 CET`), as `alp thread log` prints a conversation's lines; the whole moment
  is the element's title.
- **Folding**: a tool call is one line (`⚙ name input → result`) that opens to its input and
  result; a report, a push or a prompt longer than `FOLD_LINES` lines or `FOLD_CHARS`
  characters opens from its first line. The assistant's words are never folded: they are
  what the view is read for (its Markdown is rendered, alpd.web.markdown).
- **Provisional** items may still change where they stand: a tool call without its result
  yet, a delivery no root has taken, the recap. The script re-reads the view's tail from the
  first of them when something happens in the thread (docs/web.md, "The conversation").
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Final

from alpd.web.view import local_time, money, origin_label
from protocol import messages as m
from protocol.runtime_output import one_line

#: a text folded past this many lines or characters (the assistant's words never are)
FOLD_LINES: Final = 12
FOLD_CHARS: Final = 1500
#: characters of a tool call's input and result on its one line
TOOL_LINE_CHARS: Final = 80

MARKERS: Final = frozenset({"root", "clear", "undo", "compaction", "recap"})
DELIVERIES: Final = frozenset({"push", "scheduled", "handoff-in", "sub-agent"})
#: the items of the assistant rendered as Markdown
MARKDOWN: Final = frozenset({"reply"})


def item_time(iso: str | None, now: datetime) -> str:
    """`09:41 CET` for a moment of `now`'s (local) day, else the whole `local_time`."""
    return item_times(iso, now.astimezone().date())[1]


def item_times(iso: str | None, today: date) -> tuple[str, str]:
    """An item's whole moment (`local_time`, its title) and what the view shows of it
    (without the date on the local day `today`), the moment read once for both."""
    whole = local_time(iso)
    if not iso or whole == iso:
        return whole, whole
    day, shown = whole.split(" ", 1)
    return whole, shown if day == today.isoformat() else whole


def speaker(item: m.TranscriptItem) -> str:
    """Who an item is from, as the view heads it."""
    source = item.source or ""
    if item.type == "push":
        return f"push · {source}" if source else "push"
    if item.type == "scheduled":
        return f"scheduled · {source}" if source else "scheduled"
    if item.type == "handoff-in":
        return f"handoff from {source}" if source else "handoff"
    if item.type == "handoff-out":
        return f"handoff to {source}" if source else "handoff sent"
    if item.type == "sub-agent":
        return "sub-agent result"
    if item.type == "report":
        return f"report · {item.status}" if item.status else "report"
    if item.type == "error":
        return "error"
    if item.speaker == "person":
        return "You"
    if item.speaker == "assistant":
        return f"Assistant · {item.model}" if item.model else "Assistant"
    return {"tool": "tool", "system": "system"}.get(item.speaker, "alp")


def folded(text: str) -> bool:
    return len(text) > FOLD_CHARS or text.count("\n") >= FOLD_LINES


def first_line(text: str) -> str:
    return one_line(text, TOOL_LINE_CHARS) or "(empty)"


def tool_line(tool: m.TranscriptTool) -> str:
    """`⚙ name input → result` (`✗` for an error, `…` while it has no result), one line."""
    shown = f"⚙ {tool.name} {one_line(tool.input, TOOL_LINE_CHARS)}".rstrip()
    if tool.result is None:
        return shown + " …"
    mark = "✗" if tool.is_error else "→"
    return f"{shown} {mark} {one_line(tool.result, TOOL_LINE_CHARS) or '(no output)'}"


def provisional(item: m.TranscriptItem, root: m.TranscriptRoot | None = None) -> bool:
    """The item may still change or move (see the module): a tool call of a root still
    running with no result yet, a delivery still queued or a directive in the inbox, the
    recap. A call whose root settled without its result stays as it is."""
    if item.type == "tool":
        pending = item.tool is not None and item.tool.result is None
        return pending and (root is None or root.outcome is None)
    if item.type in DELIVERIES:
        return item.root_id is None and item.status in ("queued", "inbox")
    return item.type == "recap"


def root_status(root: m.TranscriptRoot | m.Execution | None) -> str:
    """`running`, `completed · $0.03`, `failed`: a root marker's state."""
    if root is None:
        return ""
    state = root.outcome or root.status
    return f"{state} · {money(root.cost_usd)}" if root.cost_usd is not None else state


def root_line(item: m.TranscriptItem, root: m.TranscriptRoot | None) -> str:
    """A root marker's line: its text and where it came from."""
    if root is None:
        return item.text
    return f"{item.text} · {origin_label(root.origin)}"


def roots_by_id(roots: list[m.TranscriptRoot]) -> dict[str, m.TranscriptRoot]:
    return {root.id: root for root in roots}


def item_classes(item: m.TranscriptItem) -> str:
    classes = ["item", f"type-{item.type}", f"speaker-{item.speaker}"]
    if item.type in MARKERS:
        classes.append("marker")
    classes.extend(f"label-{label}" for label in item.labels)
    return " ".join(classes)


def page_attributes(page: m.TranscriptResult | None) -> dict[str, Any]:
    """What the view's list carries for the script to page on (no page: nothing to page)."""
    if page is None:
        return {"previous": "", "next": "", "more_before": "", "more_after": ""}
    return {
        "previous": page.previous or "",
        "next": page.next,
        "more_before": "1" if page.more_before else "",
        "more_after": "1" if page.more_after else "",
    }


def _root_name(execution: m.Execution) -> str:
    number = f"root #{execution.sequence}" if execution.sequence else "a root"
    return f"{number} ({execution.id})"


def continued(result: m.ContinueResult) -> str:
    """What the composer says after `thread/continue`."""
    return f"Continued: {_root_name(result.execution)} runs headless with your prompt."


def pushed(result: m.PushResult) -> str:
    """What the composer says after `thread/push`, by what became of the message."""
    if result.status == "started" and result.execution is not None:
        return f"Pushed: the thread was idle; {_root_name(result.execution)} reads it."
    if result.status == "injecting":
        return "Pushed: the running root takes it while it works."
    waiting = f" ({result.waiting} waiting)" if result.waiting > 1 else ""
    if result.status == "coalesced":
        return f"Pushed: it joins the round already waiting for the running root{waiting}."
    return f"Pushed: queued for one round after the running root settles{waiting}."
