"""`thread/sync`, `history/import`, `history/search` and `history/progress`; how much of
a thread's transcripts history holds (`thread/show`)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from protocol.messages.base import (
    SEARCH_MAX_LIMIT,
    AbsolutePath,
    HistoryLabel,
    HistoryLevel,
    Wire,
    documented,
)
from protocol.messages.memory import Memory


class RootHistory(Wire):
    """How much of one root's transcript history holds (thread/show, thread/sync)."""

    execution_id: str
    level: HistoryLevel
    entries: int = 0
    skipped: int = 0
    #: an earlier execution this one continues (same native session: `resume`) or forks
    links_to: str | None = None
    link_kind: str | None = None


class HistorySummary(Wire):
    level: HistoryLevel
    entries: int = 0
    roots: int = 0
    by_root: list[RootHistory] = msgspec.field(default_factory=list)


class ThreadSyncParams(Wire):
    thread_id: str
    #: echoed in `history/progress` notifications (to subscribers of that event)
    progress_token: str | None = None


class ThreadSyncResult(Wire):
    thread_id: str
    level: HistoryLevel
    entries: int
    added: int
    roots: list[RootHistory]


class HistoryImportParams(Wire):
    runtime: Literal["claude", "codex"]
    #: a directory of native sessions (default: ~/.claude/projects or $CODEX_HOME/sessions)
    path: AbsolutePath | None = None
    progress_token: str | None = None


class ImportedSession(Wire):
    native_session_id: str
    #: the transcript file read
    path: str
    #: the legacy-unthreaded execution that holds it (or the root alp started for it)
    execution_id: str
    #: imported (new), updated (imported before, more was read now), known (a root of a thread)
    status: Literal["imported", "updated", "known"]
    #: entries of the session in the history now, and how many this import added
    entries: int
    added: int
    #: lines that could not be read (the session is then `partial`)
    skipped: int
    #: completeness: complete, partial, final-only, unsupported (None: nothing read yet)
    level: HistoryLevel | None = None


class HistoryImportResult(Wire):
    runtime: str
    path: str
    files: int
    imported: int
    updated: int
    added: int
    skipped: int
    #: sessions already owned by an execution alp started (synced there, not re-imported)
    known: int = 0
    #: every session read, in the order read
    sessions: list[ImportedSession] = msgspec.field(default_factory=list)


class HistoryProgress(Wire):
    token: str | None
    operation: Literal["sync", "import"]
    done: int
    total: int
    added: int = 0
    bytes: int = 0
    total_bytes: int = 0
    path: str | None = None


SearchRole = Literal["user", "assistant", "tool", "system"]
#: `hybrid` (default): keyword and meaning fused, keyword alone (with a notice) while no
#: meaning index can answer; `keyword`: full-text only; `meaning`: the meaning index only
SearchMode = Literal["hybrid", "keyword", "meaning"]
MeaningState = Literal["off", "building", "stale", "ready"]


class MeaningIndexState(Wire):
    """The meaning index (docs/search.md): `off` (no embedder: `reason` says why and what to
    do), `building` (its first generation, `embedded` of `total` chunks), `stale` (the model
    changed: the previous generation answers while the new one builds), `ready`."""

    state: MeaningState
    embedder: str | None = None
    #: the model's directory (model2vec) or name (openai)
    model: str | None = None
    #: chunks the current generation has embedded, of the chunks cut so far
    embedded: int = 0
    total: int = 0
    #: history entries not yet cut into units
    pending_entries: int = 0
    #: chunks embedded per second, over the last minute of building
    rate: float | None = None
    #: why the index is off, with what to do
    reason: str | None = None
    #: the last failure of a building step (retried)
    error: str | None = None


class HistorySearchParams(Wire):
    query: str
    thread_id: str | None = None
    runtime: str | None = None
    role: SearchRole | None = None
    #: ISO 8601 bounds on the entry's time (a thread document's: its last update)
    since: str | None = None
    until: str | None = None
    limit: Annotated[
        int,
        documented(
            minimum=1,
            maximum=SEARCH_MAX_LIMIT,
            description=f"hits at most, 1..{SEARCH_MAX_LIMIT} (INVALID_ARGUMENT outside)",
        ),
    ] = 20
    highlight_start: str = "**"
    highlight_end: str = "**"
    mode: SearchMode = "hybrid"


class SearchHit(Wire):
    #: `entry` (a history entry) or `thread` (a thread's title and context lines)
    source: Literal["entry", "thread"]
    snippet: str
    score: float
    thread_id: str | None = None
    thread_title: str | None = None
    execution_id: str | None = None
    #: the root's sequence in its thread; None for legacy-unthreaded imports
    sequence: int | None = None
    runtime: str | None = None
    role: str | None = None
    kind: str | None = None
    at: str | None = None
    native_session_id: str | None = None
    #: the history entry (entry hits; a meaning hit's: the entry its chunk starts in): what
    #: `alp memory add --entry` cites
    entry_id: int | None = None
    legacy: bool = False
    #: `before-clear` (its root opened before a clear of the thread), `undone` (its root's
    #: contribution was undone): kept and searchable, never read by a recap
    labels: list[HistoryLabel] = msgspec.field(default_factory=list)
    #: which legs found it: `keyword`, `meaning` (a hybrid hit may carry both)
    legs: list[str] = msgspec.field(default_factory=list)


class HistorySearchResult(Wire):
    hits: list[SearchHit]
    #: which full-text index answered: `words` (unicode61), `trigram` (CJK), `like` (short
    #: CJK terms), `none`; `meaning` when only the meaning index was asked
    index: str
    #: the FTS5 expression the query became (empty when nothing searchable was left)
    expression: str = ""
    #: what answered: `hybrid` (both legs fused by reciprocal rank), `keyword`, `meaning`
    mode: SearchMode = "keyword"
    #: the meaning index's state when this search ran
    meaning: MeaningIndexState | None = None
    #: set when the mode asked for is not the mode that answered, and why
    notice: str | None = None
    #: active memories holding every word of the query (a section of their own, beside the
    #: history's hits; at most 5)
    memories: list[Memory] = msgspec.field(default_factory=list)


__all__ = [
    "HistoryImportParams",
    "HistoryImportResult",
    "HistoryProgress",
    "HistorySearchParams",
    "HistorySearchResult",
    "HistorySummary",
    "ImportedSession",
    "MeaningIndexState",
    "MeaningState",
    "RootHistory",
    "SearchHit",
    "SearchMode",
    "SearchRole",
    "ThreadSyncParams",
    "ThreadSyncResult",
]
