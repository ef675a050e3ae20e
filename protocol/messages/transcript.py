"""`thread/transcript` (a thread's conversation, paged both ways, and its live items) and
`thread/adopt` (an imported native session becomes a root of a thread).

The order, the cursors and what each item type carries are in docs/transcript.md. A cursor is
opaque: a client passes back what it was given, never builds one.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from protocol.messages.base import HistoryLabel, Kind, Outcome, Revision, Wire, documented
from protocol.messages.executions import Origin

#: items per `thread/transcript` page, at most
TRANSCRIPT_MAX_LIMIT = 500
#: characters of a tool call's input and result in an item unless `full` is asked
TRANSCRIPT_SHORT_CHARS = 200

#: what an item is (docs/transcript.md, "Items"):
#: `prompt` the person's (or a round's) words to the runtime, `reply` the assistant's text,
#: `tool` a tool call with its result, `error` an error the runtime wrote in its transcript,
#: `push` / `scheduled` / `handoff-in` / `sub-agent` a delivery taken by a root (with its
#: envelope), `handoff-out` a handoff this thread sent, `report` what a run that nobody
#: watched ended with, `recap` the thread's recap, and the markers `root` (a root opened),
#: `clear`, `undo`, `compaction`
TranscriptItemType = Literal[
    "root",
    "prompt",
    "reply",
    "tool",
    "error",
    "push",
    "scheduled",
    "handoff-in",
    "sub-agent",
    "handoff-out",
    "report",
    "recap",
    "clear",
    "undo",
    "compaction",
]


class TranscriptParams(Wire):
    thread_id: str
    #: items before this cursor (an older page); the page is the last `limit` of them
    before: str | None = None
    #: items after this cursor (a newer page); `""` is the start of the thread
    after: str | None = None
    limit: Annotated[
        int,
        documented(
            minimum=1,
            maximum=TRANSCRIPT_MAX_LIMIT,
            description=f"items at most, 1..{TRANSCRIPT_MAX_LIMIT} (INVALID_ARGUMENT outside)",
        ),
    ] = 100
    #: only the items of the root with this sequence (its markers and deliveries included)
    root: Annotated[int, msgspec.Meta(ge=1, le=2**53)] | None = None
    #: only items at or after this time (ISO 8601, as `history/search` takes it)
    since: str | None = None
    #: a tool call's whole stored input and result (the result's stored tail: history keeps
    #: the last 2 KiB of a tool's output), not their first `TRANSCRIPT_SHORT_CHARS`
    full: bool = False


class TranscriptTool(Wire):
    name: str
    #: the call's input, shortened to `TRANSCRIPT_SHORT_CHARS` unless `full`
    input: str = ""
    #: the result (None while the call has none), shortened the same way
    result: str | None = None
    is_error: bool = False
    call_id: str | None = None
    #: the input or the result was shortened (ask again with `full`)
    truncated: bool = False


class TranscriptItem(Wire):
    #: where this item is: pass it as `before` / `after` to page from here
    cursor: str
    type: TranscriptItemType
    #: the root it belongs to (its execution id and sequence); None for a marker between
    #: roots (`clear`, `undo`, `compaction`), a recap, a delivery not taken yet
    root_id: str | None = None
    sequence: int | None = None
    #: the execution that wrote it (a root, or a sub-agent's child for its report)
    execution_id: str | None = None
    #: when, ISO 8601 UTC (a runtime's own timestamp for entries)
    at: str | None = None
    #: who speaks: `person`, `assistant`, `tool`, `system` (a runtime's note), `alp`
    speaker: Literal["person", "assistant", "tool", "system", "alp"] = "alp"
    #: the words (secret-filtered at write); a marker's one-line description
    text: str = ""
    tool: TranscriptTool | None = None
    #: a delivery's or handoff's envelope line (the label it reached the runtime with)
    envelope: str | None = None
    #: a push's label, a handoff's source or target thread, a schedule id
    source: str | None = None
    #: the other thread of a handoff
    thread_id: str | None = None
    #: `before-clear`, `undone` (docs/context.md): shown, never hidden
    labels: list[HistoryLabel] = msgspec.field(default_factory=list)
    #: a report's or root marker's outcome, a delivery's or handoff's status
    status: str | None = None
    #: the history entry (entries only)
    entry_id: int | None = None
    model: str | None = None


class TranscriptRoot(Wire):
    """A root the page's items belong to: one per root referenced, not repeated per item."""

    id: str
    sequence: int
    runtime: str
    agent: str
    kind: Kind
    #: who and what opened it (`door`, `by`, and per kind `scheduleId`, `pushSource`, …)
    origin: Origin
    status: str
    outcome: Outcome | None = None
    cost_usd: float | None = None
    created_at: str | None = None
    started_at: str | None = None
    settled_at: str | None = None
    native_session_id: str | None = None
    #: `before-clear`, `undone`: its items carry them too
    labels: list[HistoryLabel] = msgspec.field(default_factory=list)


class TranscriptResult(Wire):
    thread_id: str
    #: oldest first
    items: list[TranscriptItem]
    roots: list[TranscriptRoot]
    #: pass as `before` for the older page; None at the start of the thread
    previous: str | None = None
    #: pass as `after` for what comes next (also when `more_after` is false: to poll)
    next: str = ""
    more_before: bool = False
    more_after: bool = False


class TranscriptItems(Wire):
    """`thread/transcript` notification on `events/subscribe`: items written while a root
    runs (or a delivery, report or marker was recorded), in the order they were written."""

    thread_id: str
    items: list[TranscriptItem]
    roots: list[TranscriptRoot]


class ThreadAdoptParams(Wire):
    #: the native session id (`alp import`'s sessions), or its legacy execution's id
    session_id: str
    #: a thread to add it to as its next root (default: a new thread)
    thread_id: str | None = None
    #: the new thread's title (default: the session's first prompt, shortened)
    title: Annotated[str, msgspec.Meta(max_length=1024)] | None = None
    if_revision: Revision | None = None


class ThreadAdoptResult(Wire):
    thread_id: str
    #: the new root
    execution_id: str
    sequence: int
    #: the legacy-unthreaded execution it was adopted from
    adopted_from: str
    native_session_id: str
    revision: int
    entries: int
    created_thread: bool = False


__all__ = [
    "TRANSCRIPT_MAX_LIMIT",
    "TRANSCRIPT_SHORT_CHARS",
    "ThreadAdoptParams",
    "ThreadAdoptResult",
    "TranscriptItem",
    "TranscriptItemType",
    "TranscriptItems",
    "TranscriptParams",
    "TranscriptResult",
    "TranscriptRoot",
    "TranscriptTool",
]
