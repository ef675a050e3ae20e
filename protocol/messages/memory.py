"""Memory across threads (`memory/add|list|show|supersede|retract|review|promote|propose`)
and its items in the inbox (docs/memory.md)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from protocol.messages.base import AbsolutePath, Title, Wire, byte_capped, documented

MemoryKind = Literal["fact", "convention", "preference", "lesson"]
MemoryScope = Literal["workspace", "global"]
#: a memory's status is its newest version's; an earlier version is `superseded`
MemoryStatus = Literal["active", "superseded", "retracted"]
ProposalStatus = Literal["inbox", "confirmed", "dismissed"]

#: a memory's text after secret filtering and joining its lines, in characters
MEMORY_TEXT_MAX_CHARS = 500
#: what a client may send as a memory's text (the daemon then cleans and caps it)
MEMORY_INPUT_MAX_BYTES = 4096
#: memories a list, a search or a review returns at most
MEMORY_LIST_MAX = 1000
#: history entries one memory may cite
MEMORY_MAX_ENTRIES = 16

MemoryText = Annotated[
    str,
    msgspec.Meta(max_length=MEMORY_INPUT_MAX_BYTES),
    byte_capped(
        MEMORY_INPUT_MAX_BYTES,
        "one statement; secrets are redacted and it must then be at most "
        f"{MEMORY_TEXT_MAX_CHARS} characters (INVALID_ARGUMENT above)",
    ),
]
ListLimit = Annotated[
    int,
    msgspec.Meta(ge=1, le=MEMORY_LIST_MAX),
    documented(description=f"memories at most, 1..{MEMORY_LIST_MAX}"),
]
MemoryId = Annotated[str, msgspec.Meta(max_length=64)]


class MemoryProvenance(Wire):
    """Where a memory comes from (the citation): who, by which door, and what it cites."""

    by: str
    door: str
    thread_id: str | None = None
    #: kept as text when cited: a thread that is gone still cites
    thread_title: str | None = None
    context_revision: int | None = None
    line_id: str | None = None
    line_kind: str | None = None
    #: the history entries it came from (`alp memory add --entry ID`)
    history_entry_ids: list[int] = msgspec.field(default_factory=list)
    execution_id: str | None = None
    proposal_id: str | None = None
    file_path: str | None = None
    file_sha256: str | None = None


class Memory(Wire):
    """A memory as it stands: its newest version."""

    id: str
    kind: MemoryKind
    scope: MemoryScope
    text: str
    status: MemoryStatus
    version: int
    digest: str
    confirmed_at: str
    created_at: str
    updated_at: str
    #: the workspace of a `workspace` memory (absent: global)
    workspace: str | None = None
    thread_id: str | None = None
    file_path: str | None = None


class MemoryVersion(Wire):
    version: int
    text: str
    status: MemoryStatus
    #: `added`, `superseded`, `retracted`, `confirmed`
    change: str
    at: str
    confirmed_at: str
    digest: str
    provenance: MemoryProvenance
    previous_digest: str | None = None


class CitedEntry(Wire):
    """A history entry a memory cites, read back when the memory is shown."""

    id: int
    #: false once the entry is gone (its thread deleted): the id is all that is left
    exists: bool
    execution_id: str | None = None
    thread_id: str | None = None
    thread_title: str | None = None
    role: str | None = None
    kind: str | None = None
    at: str | None = None
    #: its text's first characters, one line
    excerpt: str | None = None


class MemoryCitation(Wire):
    """What a memory cites, in words, and whether its thread is still there."""

    text: str
    thread_id: str | None = None
    thread_title: str | None = None
    thread_exists: bool = False
    context_revision: int | None = None
    #: the cited line as the thread's context holds it at that revision
    line_text: str | None = None
    #: the history entries it cites, as they are now (one is `exists: false` once gone)
    entries: list[CitedEntry] = msgspec.field(default_factory=list)


class MemoryAddParams(Wire):
    text: MemoryText
    kind: MemoryKind = "fact"
    scope: MemoryScope = "workspace"
    #: the workspace (default: the one `cwd` is in)
    workspace: AbsolutePath | None = None
    cwd: AbsolutePath | None = None
    #: a file the statement is about: its sha256 is kept, `memory/review` compares it
    file: AbsolutePath | None = None
    #: history entries it came from (a search hit's `entryId`): each must be the caller's
    #: (HISTORY_ENTRY_NOT_FOUND otherwise)
    entries: Annotated[list[int], msgspec.Meta(max_length=MEMORY_MAX_ENTRIES)] = msgspec.field(
        default_factory=list
    )


class MemoryListParams(Wire):
    workspace: AbsolutePath | None = None
    cwd: AbsolutePath | None = None
    #: every workspace's memories, not only this one's (and the global ones)
    all: bool = False
    #: also the retracted ones
    retracted: bool = False
    #: only memories holding every word of this
    query: Annotated[str, msgspec.Meta(max_length=1000)] | None = None
    limit: ListLimit = 200


class MemoryListResult(Wire):
    memories: list[Memory]
    #: memories left out because their chain no longer verifies (MEMORY_TAMPERED)
    tampered: list[str] = msgspec.field(default_factory=list)


class MemoryRef(Wire):
    id: MemoryId


class MemoryShowResult(Wire):
    memory: Memory
    #: every version, oldest first, the chain verified
    versions: list[MemoryVersion]
    citation: MemoryCitation


class MemorySupersedeParams(Wire):
    id: MemoryId
    text: MemoryText
    kind: MemoryKind | None = None


class MemoryReviewParams(Wire):
    workspace: AbsolutePath | None = None
    cwd: AbsolutePath | None = None
    all: bool = False
    #: a memory not confirmed for this many days is listed
    days: Annotated[int, msgspec.Meta(ge=1, le=36500)] = 90
    #: confirm these (still true): a new version, confirmed now, its file's sha256 renewed
    confirm: Annotated[list[MemoryId], msgspec.Meta(max_length=MEMORY_LIST_MAX)] = msgspec.field(
        default_factory=list
    )


class MemoryFileChange(Wire):
    memory: Memory
    file_path: str
    #: the sha256 kept when the memory was written or last confirmed
    then_sha256: str | None
    #: the file's sha256 now; absent when the file is gone or unreadable
    now_sha256: str | None = None


class MemoryReviewResult(Wire):
    #: not confirmed for `days` days
    stale: list[Memory]
    #: citing a file whose content changed since (or that is gone)
    changed: list[MemoryFileChange]
    confirmed: list[Memory] = msgspec.field(default_factory=list)


class MemoryPromoteParams(Wire):
    #: id, id prefix, exact title or `@last`
    thread: Title
    #: the pinned line: its id, or its number as `alp thread context` shows it (1 = first)
    pin: Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
    kind: MemoryKind | None = None
    scope: MemoryScope = "workspace"


class MemoryProposeParams(Wire):
    """From inside a run (the MCP tool `remember`): a memory the person may confirm."""

    text: MemoryText
    kind: MemoryKind = "fact"
    scope: MemoryScope = "workspace"
    file: AbsolutePath | None = None


class MemoryProposal(Wire):
    """A run's proposal, waiting in the inbox (the inbox's second kind of item)."""

    id: str
    thread_id: str
    execution_id: str
    workspace: str
    scope: MemoryScope
    kind: MemoryKind
    text: str
    status: ProposalStatus
    proposed_at: str
    #: where it comes from, in words: the run and its thread
    origin: str
    thread_title: str | None = None
    file_path: str | None = None
    decided_at: str | None = None
    #: the memory it became, once confirmed
    memory_id: str | None = None


__all__ = [
    "MEMORY_INPUT_MAX_BYTES",
    "MEMORY_LIST_MAX",
    "MEMORY_MAX_ENTRIES",
    "MEMORY_TEXT_MAX_CHARS",
    "CitedEntry",
    "Memory",
    "MemoryAddParams",
    "MemoryCitation",
    "MemoryFileChange",
    "MemoryKind",
    "MemoryListParams",
    "MemoryListResult",
    "MemoryPromoteParams",
    "MemoryProposal",
    "MemoryProposeParams",
    "MemoryProvenance",
    "MemoryRef",
    "MemoryReviewParams",
    "MemoryReviewResult",
    "MemoryScope",
    "MemoryShowResult",
    "MemoryStatus",
    "MemorySupersedeParams",
    "MemoryVersion",
    "ProposalStatus",
]
