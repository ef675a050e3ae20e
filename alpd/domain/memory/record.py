"""A memory: a small, cited statement worth knowing across threads, and its versions.

A memory is never edited in place. Each change (a new text, a retraction, a confirmation) is
a new version, and the versions of one memory form a chain: version 1 has no previous digest,
version n + 1 names the digest of version n, and each digest is sha256 over the canonical JSON
(RFC 8785) of the whole version, previous digest included (`alpd.domain.canonical`), as the
context snapshots are chained. So a version rewritten in the database, under its old digest
or a recomputed one, breaks the chain where it is read: `verify_chain` says
MEMORY_TAMPERED, naming the memory and the version.

The newest version is the memory: its status is `active` or `retracted`; every earlier one is
`superseded` (`version_status`). What a version holds:

- text: one line of at most `TEXT_MAX_CHARS` characters, secret-filtered before it is stored
  (`clean_text`: whitespace runs become one space, `alpd.domain.secrets.filter.redact`);
- kind (`fact`, `convention`, `preference`, `lesson`) and scope (`workspace`: the workspace it
  was written in, the default; `global`: every workspace of its owner);
- provenance: who wrote it and by which door, the thread (id and title, kept as text so a
  thread that is gone still cites), its context revision and pinned line, or the history
  entries it came from (their ids: `alp memory show` reads them back, and says which are gone),
  the execution that produced it, the inbox proposal it was confirmed from, and a file it
  cites with the file's sha256 when cited (`alp memory review` compares it);
- when it was last confirmed by the person, and when this version was written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

import msgspec

from alpd.domain.canonical import digest_of
from alpd.domain.secrets.filter import redact
from alpd.errors import InvalidArgument, MemoryTampered

MemoryKind = Literal["fact", "convention", "preference", "lesson"]
MemoryScope = Literal["workspace", "global"]
VersionStatus = Literal["active", "retracted"]
MemoryStatus = Literal["active", "superseded", "retracted"]

KINDS: Final[tuple[MemoryKind, ...]] = ("fact", "convention", "preference", "lesson")
SCOPES: Final[tuple[MemoryScope, ...]] = ("workspace", "global")
#: a memory is a statement, not a document: what a line of a session context can carry
TEXT_MAX_CHARS: Final = 500
MEMORY_PREFIX: Final = "mem_"


class Provenance(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """Where a memory comes from; every field but `by` and `door` is optional."""

    #: `uid:N`, the person who wrote or confirmed it
    by: str
    #: `cli`, `web`, `inbox` (a run's proposal the person confirmed), `promote`
    door: str
    thread_id: str | None = None
    #: the thread's title when cited, kept as text: a thread that is gone still cites
    thread_title: str | None = None
    context_revision: int | None = None
    #: the pinned line's id and kind (`alp memory promote`)
    line_id: str | None = None
    line_kind: str | None = None
    #: the history entries it came from (`alp memory add --entry ID`), ascending
    history_entry_ids: tuple[int, ...] = ()
    #: the execution that produced it: the one that pinned the line, or proposed it
    execution_id: str | None = None
    proposal_id: str | None = None
    #: a file the statement is about, and its sha256 when it was written or confirmed
    file_path: str | None = None
    file_sha256: str | None = None


class MemoryVersion(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One version of a memory: what the digest covers, previous digest included."""

    memory_id: str
    version: int
    owner_uid: int
    kind: MemoryKind
    scope: MemoryScope
    #: the workspace of a `workspace` memory; None for a global one
    workspace: str | None
    text: str
    status: VersionStatus
    provenance: Provenance
    confirmed_at: str
    at: str
    #: why this version was written: `added`, `superseded`, `retracted`, `confirmed`
    change: str
    previous_digest: str | None


def version_digest(version: MemoryVersion) -> str:
    return digest_of(version)


def clean_text(text: str) -> str:
    """The stored text: one line, secrets redacted, within TEXT_MAX_CHARS (else
    INVALID_ARGUMENT saying how long it is)."""
    line = " ".join(redact(text).text.split())
    if not line:
        raise InvalidArgument("a memory needs text: one self-contained statement", field="text")
    if len(line) > TEXT_MAX_CHARS:
        raise InvalidArgument(
            f"a memory is at most {TEXT_MAX_CHARS} characters (this one is {len(line)}): "
            "keep one statement; a longer document belongs in the workspace, cited with --file",
            field="text",
            chars=len(line),
        )
    return line


def first_version(
    *,
    memory_id: str,
    owner_uid: int,
    kind: MemoryKind,
    scope: MemoryScope,
    workspace: str | None,
    text: str,
    provenance: Provenance,
    at: str,
) -> MemoryVersion:
    return MemoryVersion(
        memory_id=memory_id,
        version=1,
        owner_uid=owner_uid,
        kind=kind,
        scope=scope,
        workspace=None if scope == "global" else workspace,
        text=clean_text(text),
        status="active",
        provenance=provenance,
        confirmed_at=at,
        at=at,
        change="added",
        previous_digest=None,
    )


def next_version(
    head: MemoryVersion,
    *,
    change: Literal["superseded", "retracted", "confirmed"],
    at: str,
    by: str,
    door: str,
    text: str | None = None,
    file_sha256: str | None = None,
) -> MemoryVersion:
    """The version after `head`: a new text (`superseded`), a retraction, or a
    confirmation (same text, confirmed now, the cited file's current sha256)."""
    provenance = msgspec.structs.replace(head.provenance, by=by, door=door)
    if file_sha256 is not None:
        provenance = msgspec.structs.replace(provenance, file_sha256=file_sha256)
    confirmed = at if change in ("superseded", "confirmed") else head.confirmed_at
    return msgspec.structs.replace(
        head,
        version=head.version + 1,
        text=clean_text(text) if text is not None else head.text,
        status="retracted" if change == "retracted" else "active",
        provenance=provenance,
        confirmed_at=confirmed,
        at=at,
        change=change,
        previous_digest=version_digest(head),
    )


def verify_chain(versions: Sequence[MemoryVersion], digests: Sequence[str]) -> str:
    """The head's digest when `versions` (1..n, oldest first) chain and each hashes to its
    stored digest; MEMORY_TAMPERED naming the first version that does not."""
    previous: str | None = None
    for number, (version, stored) in enumerate(zip(versions, digests, strict=True), 1):
        if (
            version.version != number
            or version.previous_digest != previous
            or version_digest(version) != stored
        ):
            raise MemoryTampered(
                f"memory {version.memory_id} version {version.version} no longer matches its "
                "digest chain: it was changed outside alp; its text is not used",
                memoryId=version.memory_id,
                version=version.version,
            )
        previous = stored
    if previous is None:
        raise MemoryTampered("a memory with no versions", memoryId=None)
    return previous


def version_status(version: MemoryVersion, head_version: int) -> MemoryStatus:
    if version.version < head_version:
        return "superseded"
    return version.status


__all__ = [
    "KINDS",
    "MEMORY_PREFIX",
    "SCOPES",
    "TEXT_MAX_CHARS",
    "MemoryKind",
    "MemoryScope",
    "MemoryStatus",
    "MemoryVersion",
    "Provenance",
    "VersionStatus",
    "clean_text",
    "first_version",
    "next_version",
    "verify_chain",
    "version_digest",
    "version_status",
]
