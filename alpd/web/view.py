"""What the pages show, computed from wire results: pure functions, no IO, time a parameter.

The templates only place these values; every choice of wording, rounding and order is made
here, where a property test can reach it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from protocol import messages as m

#: the context's sections in the order `alp thread context` prints them
CONTEXT_SECTIONS: Final = (
    ("objective", "Objective"),
    ("decisions", "Decisions"),
    ("constraints", "Constraints"),
    ("openItems", "Open items"),
    ("nextActions", "Next actions"),
)
_UNITS: Final = ((86_400, "d"), (3_600, "h"), (60, "min"), (1, "s"))
#: C0 controls but tab, newline, form feed and carriage return, and DEL: HTML forbids them in
#: a page (a NUL is a parse error the browser turns into U+FFFD, or worse, and ends a C string
#: in tools that read the page); every value is shown with these as their Unicode control
#: pictures (␀, ␇ …)
_CONTROLS: Final = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f]")


def _picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    return chr(0x2421 if code == 0x7F else 0x2400 + code)


def control_pictures(text: str) -> str:
    """`text` with each C0 control (but tab, newline, form feed, carriage return) and DEL
    shown as its control picture."""
    return _CONTROLS.sub(_picture, text) if _CONTROLS.search(text) else text


def parse_time(iso: str) -> datetime:
    return datetime.fromisoformat(iso)


def duration(seconds: float | None) -> str:
    """`45 s`, `3 min 4 s`, `2 h 5 min`, `3 d 1 h`: the two largest units; `—` when unknown."""
    if seconds is None:
        return "—"
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole} s"
    parts: list[str] = []
    for size, unit in _UNITS:
        if whole >= size or parts:
            count, whole = divmod(whole, size)
            parts.append(f"{count} {unit}")
        if len(parts) == 2:
            break
    return " ".join(part for part in parts if not part.startswith("0 ")) or "0 s"


def local_time(iso: str | None) -> str:
    """A moment as every door shows it: `2026-12-02 09:41 CET`, in the zone of the machine
    alpd runs on (the command line's `alpctl.clock.local_time`, the editors' the same)."""
    if not iso:
        return "—"
    try:
        moment = parse_time(iso)
    except ValueError:
        return iso
    if moment.tzinfo is None:
        return iso
    local = moment.astimezone()
    # as strftime("%Y-%m-%d %H:%M %Z") writes it, without its cost (a page shows 1,000)
    zone = local.tzname() or local.strftime("%z")
    return (
        f"{local.year:04d}-{local.month:02d}-{local.day:02d} "
        f"{local.hour:02d}:{local.minute:02d} {zone}"
    )


def ago(iso: str | None, now: datetime) -> str:
    """How long before `now` an ISO time was, in its largest unit: `just now`, `5 min ago`."""
    if not iso:
        return "—"
    seconds = (now - parse_time(iso)).total_seconds()
    if seconds < 5:
        return "just now"
    for size, unit in _UNITS:
        if seconds >= size:
            return f"{int(seconds // size)} {unit} ago"
    return "just now"


def money(cost: float | None) -> str:
    """USD with cents (`$0.03`), four places under a cent (`$0.0042`), `—` when unknown."""
    if cost is None:
        return "—"
    if 0 < cost < 0.01:
        return f"${cost:.4f}"
    return f"${cost:.2f}"


def origin_label(origin: m.Origin) -> str:
    """The door and, where there is one, why: `scheduler (sch_…)`, `cli`, `push (alert)`."""
    why = (
        origin.push_source
        or origin.schedule_id
        or origin.purpose
        or origin.handoff_id
        or origin.parent_execution_id
    )
    return f"{origin.door} ({why})" if why else origin.door


def outcome_label(execution: m.Execution) -> str:
    if execution.outcome is None:
        return execution.status
    if execution.exit_code not in (None, 0):
        return f"{execution.outcome} (exit {execution.exit_code})"
    return execution.outcome


@dataclass(frozen=True, slots=True)
class ContextItem:
    text: str
    source: str
    line_id: str


@dataclass(frozen=True, slots=True)
class ContextSection:
    title: str
    items: tuple[ContextItem, ...]


def context_sections(snapshot: dict[str, Any]) -> list[ContextSection]:
    """The non-empty sections of a snapshot, each line with the execution that pinned it."""
    sections = []
    for key, title in CONTEXT_SECTIONS:
        value = snapshot.get(key)
        lines = [value] if isinstance(value, dict) else list(value or [])
        items = tuple(
            ContextItem(
                text=str(line.get("text", "")),
                source=str(line.get("sourceExecutionId", "")),
                line_id=str(line.get("id", "")),
            )
            for line in lines
        )
        if items:
            sections.append(ContextSection(title, items))
    return sections


#: what the search page asks history/search to put around a match: control characters no
#: indexed text contains, so a `**` in the text itself is not taken for a mark
MARK_START: Final = "\x02"
MARK_END: Final = "\x03"


def snippet_parts(snippet: str) -> list[tuple[str, bool]]:
    """A snippet as (text, is_match) runs, for the page to escape each and mark the matches."""
    parts: list[tuple[str, bool]] = []
    for index, chunk in enumerate(snippet.split(MARK_START)):
        if index == 0:
            parts.append((chunk, False))
            continue
        matched, _, rest = chunk.partition(MARK_END)
        parts.append((matched, True))
        parts.append((rest, False))
    return [(text, marked) for text, marked in parts if text]
