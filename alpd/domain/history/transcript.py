"""A thread's conversation as items (`thread/transcript`): where each item stands, the
cursors, and the page built from the store's rows. Pure: rows in, wire types out.

Order. Every item has a key `(s, p, n)`, compared as a tuple (docs/transcript.md):

* `s` — the root it belongs to (its sequence); an item between roots (a clear, an undo, a
  compaction, the recap, a delivery no root has taken yet) takes the newest root opened at
  or before its time (0: before the first root);
* `p` — the phase: 0 the root opened, 1 the deliveries it took (pushes, fires, handoffs,
  sub-agent results: what its round was asked), 2 its transcript's entries, 3 handoffs it
  sent, 4 reports of it and its children; after a root: 5 compactions, 6 clears and undos,
  7 deliveries still waiting (or failed), 8 directives in the inbox, 9 the recap;
* `n` — the row's own number within the phase (entry id, delivery id, report id, revision).

Keys never change once written, except a waiting delivery's (it moves into the root that
takes it) and the recap's (a refresh replaces it).

Cursors are a key, encoded (`encode_cursor`: "t1." and base64url of "s.p.n"); `""` is the
start. A page `before` a cursor is the last `limit` items before it, `after` the first
`limit` items after it; either way oldest first. Each source is read to `limit + 1` items
past the bound, so the merge below is exact and says whether more lie beyond.

Tool calls. A `tool_call` entry becomes a `tool` item carrying its result (the nearest
`tool_result` of the same call id in the same execution); that result's own row is then
hidden, wherever the page boundary falls, so no call is shown twice. A result whose call is
not stored stands alone. Input and result are shortened to `TRANSCRIPT_SHORT_CHARS` (the
input's start, the result's end: where a command's outcome is) unless `full`.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Sequence
from functools import lru_cache
from operator import attrgetter
from typing import Final, Literal

import msgspec

from protocol import messages as m

__all__ = [
    "END",
    "ENTRY_PHASE",
    "REPORT_PHASE",
    "START",
    "CursorInvalidError",
    "Direction",
    "EntryRow",
    "EventRow",
    "Key",
    "RootRow",
    "ToolHalf",
    "TranscriptRows",
    "build_page",
    "decode_cursor",
    "encode_cursor",
    "page_bound",
    "page_window",
    "shorten_head",
    "shorten_tail",
]

Key = tuple[int, int, int]
Direction = Literal["before", "after"]

ENTRY_PHASE: Final = 2
REPORT_PHASE: Final = 4
START: Final[Key] = (-1, 0, 0)
#: past every item (a JSON number is exact to 2**53; a sequence never gets there)
END: Final[Key] = (2**62, 0, 0)

_CURSOR_PREFIX: Final = "t1."
_URL_SAFE: Final = bytes.maketrans(b"+/", b"-_")
_CURSOR_BODY: Final = re.compile(r"^(\d{1,19})\.(\d{1,2})\.(\d{1,19})$")
#: cursors remembered (`encode_cursor`): a few dozen pages' worth
CURSORS_KEPT: Final = 8192


class CursorInvalidError(ValueError):
    """A cursor this daemon did not make (or an older format)."""


@lru_cache(maxsize=CURSORS_KEPT)
def encode_cursor(key: Key) -> str:
    """The cursor of an item's key (remembered: a page encodes one per item, the same ones
    page after page, and a look-up costs a fifth of an encoding)."""
    if key == START:
        return ""
    body = f"{key[0]}.{key[1]}.{key[2]}".encode()
    # base64url without padding (`urlsafe_b64encode`'s, in one C call less: a page encodes
    # a cursor per item)
    encoded = binascii.b2a_base64(body, newline=False).rstrip(b"=").translate(_URL_SAFE)
    return _CURSOR_PREFIX + encoded.decode()


def decode_cursor(cursor: str) -> Key:
    if cursor == "":
        return START
    if not cursor.startswith(_CURSOR_PREFIX) or len(cursor) > 80:
        raise CursorInvalidError(cursor)
    body = cursor[len(_CURSOR_PREFIX) :]
    try:
        text = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise CursorInvalidError(cursor) from exc
    found = _CURSOR_BODY.match(text)
    if found is None:
        raise CursorInvalidError(cursor)
    s, p, n = (int(part) for part in found.groups())
    return (s, p, n)


def page_bound(before: str | None, after: str | None) -> tuple[Direction, Key]:
    """The direction and bound a request asks for (neither cursor: the newest page)."""
    if before is not None and after is not None:
        raise CursorInvalidError("before and after together")
    if after is not None:
        return "after", decode_cursor(after)
    if before is not None:
        return "before", decode_cursor(before) if before else END
    return "before", END


# The rows are frozen msgspec Structs (no cycles: gc=False): a page makes a hundred of them
# per call, and a frozen dataclass's __init__ costs ~25 times as much (1.5 µs against 0.06).


class RootRow(msgspec.Struct, frozen=True, gc=False):
    id: str
    sequence: int
    runtime: str
    agent: str
    kind: str
    #: the origin's JSON document as stored
    origin: str
    status: str
    outcome: str | None
    cost_usd: float | None
    created_at: str | None
    started_at: str | None
    settled_at: str | None
    native_session_id: str | None
    #: the execution whose entries are this root's (itself, or what it was adopted from)
    reads: str
    labels: tuple[m.HistoryLabel, ...] = ()


class ToolHalf(msgspec.Struct, frozen=True, gc=False):
    """The other half of a tool call: its result (text, error flag), or a result's call."""

    entry_id: int
    text: str
    is_error: bool


class EntryRow(msgspec.Struct, frozen=True, gc=False):
    key: Key
    root_id: str
    execution_id: str
    role: str
    kind: str
    text: str | None
    tool_name: str | None
    tool_input: str | None
    output_tail: str | None
    is_error: bool
    call_id: str | None
    at: str | None
    model: str | None
    other_half: ToolHalf | None = None


class EventRow(msgspec.Struct, frozen=True, gc=False):
    """Anything but an entry; `type` is the SQL's (`root`, a delivery's source kind,
    `handoff-out`, `report`, `compaction`, `clear`, `undo`, `directive`, `recap`)."""

    key: Key
    type: str
    root_id: str | None
    execution_id: str | None
    at: str | None
    text: str | None
    envelope: str | None
    source: str | None
    other_thread: str | None
    status: str | None
    #: per type: a handoff's id, an undone root's sequence, a report's message source, the
    #: recap's source revision
    ref: str | None


class TranscriptRows(msgspec.Struct, frozen=True, gc=False):
    roots: Sequence[RootRow]
    events: Sequence[EventRow]
    entries: Sequence[EntryRow]
    #: the store kept only the page's rows (`page_window`) and there was more beyond
    more: bool = False


_DELIVERY_TYPES: Final[dict[str, m.TranscriptItemType]] = {
    "push": "push",
    "schedule": "scheduled",
    "sub-agent": "sub-agent",
    "handoff": "handoff-in",
    "directive": "handoff-in",
}


def shorten_head(text: str, limit: int) -> tuple[str, bool]:
    """The start of `text`, on one line, at most `limit` characters."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat, flat != text.strip() and "\n" in text
    return flat[: limit - 1] + "…", True


def shorten_tail(text: str, limit: int) -> tuple[str, bool]:
    """The end of `text` (where a command's outcome is), at most `limit` characters."""
    stripped = text.strip()
    if len(stripped) <= limit:
        return stripped, False
    return "…" + stripped[-(limit - 1) :], True


def _entry_item(row: EntryRow, root: RootRow | None, full: bool) -> m.TranscriptItem | None:
    """The item of an entry; None for a result shown with its call. (One constructor call
    per item, its fields as keywords: a page builds a hundred of them per call.)"""
    entry_kind = row.kind
    tool: m.TranscriptTool | None = None
    text = ""
    if entry_kind == "tool_call" or entry_kind == "tool_result":
        other = row.other_half
        if entry_kind == "tool_call":
            raw_input = row.tool_input or ""
            result = other.text if other else None
            is_error = other.is_error if other else False
        elif other is not None:
            return None
        else:
            raw_input, result, is_error = "", row.output_tail or row.text or "", row.is_error
        cut_in = cut_out = False
        if not full:
            raw_input, cut_in = shorten_head(raw_input, m.TRANSCRIPT_SHORT_CHARS)
            if result is not None:
                result, cut_out = shorten_tail(result, m.TRANSCRIPT_SHORT_CHARS)
        tool = m.TranscriptTool(
            name=row.tool_name or "tool",
            input=raw_input,
            result=result,
            is_error=is_error,
            call_id=row.call_id,
            truncated=cut_in or cut_out,
        )
        kind: m.TranscriptItemType = "tool"
        speaker: Literal["person", "assistant", "tool", "system"] = "tool"
    else:
        text = row.text or ""
        if entry_kind == "prompt" or row.role == "user":
            kind, speaker = "prompt", "person"
        elif entry_kind == "error":
            kind, speaker = "error", "system"
        elif row.role == "system":
            kind, speaker = "reply", "system"
        else:
            kind, speaker = "reply", "assistant"
    key = row.key
    return m.TranscriptItem(
        cursor=encode_cursor(key),
        type=kind,
        root_id=row.root_id,
        sequence=key[0],
        execution_id=row.execution_id,
        at=row.at,
        speaker=speaker,
        text=text,
        tool=tool,
        labels=list(root.labels) if root else [],
        entry_id=key[2],
        model=row.model,
    )


def _event_text(row: EventRow, root: RootRow | None) -> str:
    if row.type == "root" and root is not None:
        return f"root #{root.sequence} · {root.runtime} ({root.agent}) · {root.kind}"
    if row.type == "compaction":
        return f"the working context was compacted (revision {row.key[2]})"
    if row.type == "clear":
        return (
            f"the working context was cleared (revision {row.key[2]}); earlier roots are "
            "before-clear"
        )
    if row.type == "undo":
        which = f"root #{row.ref}" if row.ref else "a root"
        return f"{which}'s contribution was taken back (revision {row.key[2]})"
    return row.text or ""


def _event_item(row: EventRow, root: RootRow | None) -> m.TranscriptItem:
    if row.type in _DELIVERY_TYPES:
        kind = _DELIVERY_TYPES[row.type]
    elif row.type in ("root", "recap", "handoff-out", "report", "compaction", "clear", "undo"):
        kind = row.type  # type: ignore[assignment]
    else:
        kind = "handoff-in"
    status = row.status
    if row.type == "root" and root is not None:
        status = root.outcome or root.status
    return m.TranscriptItem(
        cursor=encode_cursor(row.key),
        type=kind,
        root_id=row.root_id,
        sequence=row.key[0] if row.root_id else None,
        execution_id=row.execution_id,
        at=row.at,
        speaker="alp",
        text=_event_text(row, root),
        envelope=row.envelope,
        source=row.source,
        thread_id=row.other_thread,
        labels=list(root.labels) if root else [],
        status=status,
    )


_ORIGIN: Final = msgspec.json.Decoder(m.Origin)
_KEY: Final = attrgetter("key")


def wire_root(root: RootRow) -> m.TranscriptRoot:
    try:
        origin = _ORIGIN.decode(root.origin)
    except msgspec.DecodeError:
        origin = m.Origin(door="?", by="?")
    return m.TranscriptRoot(
        id=root.id,
        sequence=root.sequence,
        runtime=root.runtime,
        agent=root.agent,
        kind=root.kind,  # type: ignore[arg-type]
        origin=origin,
        status=root.status,
        outcome=root.outcome,  # type: ignore[arg-type]
        cost_usd=root.cost_usd,
        created_at=root.created_at,
        started_at=root.started_at,
        settled_at=root.settled_at,
        native_session_id=root.native_session_id,
        labels=list(root.labels),
    )


def page_window(
    keys: Sequence[Key], direction: Direction, bound: Key, limit: int
) -> tuple[frozenset[Key], bool]:
    """Of the keys read past the bound (each source to `limit + 1`), the page's: the `limit`
    nearest the bound; and whether any lie beyond them."""
    if direction == "before":
        inside = sorted(key for key in keys if key < bound)
        return frozenset(inside[-limit:]), len(inside) > limit
    inside = sorted(key for key in keys if key > bound)
    return frozenset(inside[:limit]), len(inside) > limit


def build_page(
    thread_id: str,
    rows: TranscriptRows,
    direction: Direction,
    bound: Key,
    limit: int,
    *,
    full: bool = False,
) -> m.TranscriptResult:
    """The page: the `limit` rows nearest the bound in its direction, oldest first."""
    merged: list[EntryRow | EventRow] = sorted([*rows.events, *rows.entries], key=_KEY)
    if direction == "before":
        merged = [row for row in merged if row.key < bound]
        beyond = len(merged) > limit or rows.more
        page = merged[-limit:]
        more_before, more_after = beyond, bound != END
    else:
        merged = [row for row in merged if row.key > bound]
        beyond = len(merged) > limit or rows.more
        page = merged[:limit]
        more_before, more_after = bound != START, beyond
    by_id = {root.id: root for root in rows.roots}
    items: list[m.TranscriptItem] = []
    referenced: dict[str, None] = {}
    for row in page:
        root_id = row.root_id
        root = by_id.get(root_id) if root_id else None
        item = _entry_item(row, root, full) if isinstance(row, EntryRow) else _event_item(row, root)
        if item is not None:
            items.append(item)
            if root_id:
                referenced[root_id] = None
    first, last = (page[0].key, page[-1].key) if page else (bound, bound)
    return m.TranscriptResult(
        thread_id=thread_id,
        items=items,
        roots=[wire_root(by_id[r]) for r in referenced if r in by_id],
        previous=encode_cursor(first) if more_before and first != END else None,
        next=encode_cursor(last) if last != END else "",
        more_before=more_before,
        more_after=more_after,
    )
