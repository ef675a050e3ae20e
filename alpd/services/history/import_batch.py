"""Importing many small sessions in few transactions.

Copying one session file alone costs four durable transactions (its execution, its rows with
the cursor, its completeness level, its times) and a dozen thread hops. A home of 2,000
sessions of ~150 KB — what `~/.claude/projects` holds after a few months — spent most of its
import waiting on fsyncs (0.23× of the floor's MB/s). So `import_sessions` splits the work:

* A session file **new to alp** (no execution of any runtime holds its session id, and it
  is named once in this import) **that fits in one read** (`CHUNK_BYTES`) goes into a
  batch. A batch (at most BATCH_FILES files and BATCH_BYTES bytes) is read, parsed and
  redacted in the transcript reader process (`alpd.services.history.read_process`) — the next batch
  while the current one is written — and written as **one** transaction, in one hop to the
  store's writer thread: the executions (with their times, from their entries' first and
  last timestamps), their rows and index entries, cursors, usage and cost, completeness
  levels.
* Every other file (a session alp already holds, a bigger file, a session named twice, a
  file that could not be read whole) goes through `HistoryService.sync_execution` one by
  one, exactly as before, after the batch it came in is written.

What a crash can leave is unchanged: a session's execution, rows and cursor are written in
the same transaction, so a batch is in the database whole or not at all, and the next
import finds the rest by native session id. A session someone imported meanwhile (another
client's import of the same directory) is checked again inside the transaction and handed to
the one-by-one path.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Final

import msgspec
import structlog

from alpd.domain.canonical import canonical_json, sha256_digest
from alpd.services.context import Caller
from alpd.services.history.chunks import CHUNK_BYTES, Chunk
from alpd.services.history.read_process import TranscriptReader
from alpd.services.history.read_worker import ReadFile
from alpd.services.history.summary import price_cost
from alpd.services.history.sync import HistoryService
from alpd.store.entry_rows import ROW_COLUMNS, EntryRow
from alpd.store.history.imports import LegacyExecution, LegacySession, write_legacy_batch
from alpd.store.history.sync import Cursor
from protocol import messages as m

__all__ = [
    "BATCH_BYTES",
    "BATCH_FILES",
    "Batch",
    "NewSession",
    "batches",
    "legacy_policy",
    "read_batch",
    "stored_span",
    "write_batch",
]

#: bytes of transcript per transaction: the bound one chunk of a big file already has. Twice
#: as much took a tenth less of the writer's CPU (fewer commits, fewer full-text segments to
#: merge), but a batch's rows are held as Python objects while they wait, ~6x the bytes for
#: short entries: alpd's RSS rose by a third (bench memory)
BATCH_BYTES: Final = CHUNK_BYTES
#: files per transaction (each costs a few rows besides its entries)
BATCH_FILES: Final = 256

log = structlog.get_logger("alpd.history")


@dataclass(slots=True)
class NewSession:
    """A session file taken for a batch, and what reading it gave."""

    path: Path
    session: str
    size: int
    execution_id: str
    cwd: str = ""
    chunk: Chunk | None = None
    #: entries the import added (all of the session's: it was new)
    added: int = 0

    @property
    def level(self) -> m.HistoryLevel:
        return "partial" if self.chunk is not None and self.chunk.skipped else "complete"


@dataclass(slots=True)
class Batch:
    """Files in import order: `fresh` are written together, `one_by_one` after them."""

    files: list[tuple[Path, str, int]]
    fresh: list[NewSession] = field(default_factory=list)
    one_by_one: list[tuple[Path, str, int]] = field(default_factory=list)


def batches(files: Sequence[tuple[Path, str, int]]) -> Iterator[list[tuple[Path, str, int]]]:
    """(path, session, size) in import order, cut at BATCH_FILES files or BATCH_BYTES."""
    current: list[tuple[Path, str, int]] = []
    size = 0
    for item in files:
        if current and (len(current) == BATCH_FILES or size + item[2] > BATCH_BYTES):
            yield current
            current, size = [], 0
        current.append(item)
        size += item[2]
    if current:
        yield current


async def read_batch(reader: TranscriptReader, runtime: str, sessions: list[NewSession]) -> None:
    """Read, parse and redact each new session whole, in the transcript reader process. A
    file that cannot be read whole keeps `chunk` None and is left to the one-by-one path,
    which meets the same problem the way a single sync does."""
    results = await reader.read(
        [ReadFile(new.execution_id, str(new.path), runtime, cwd=True) for new in sessions]
    )
    for new, result in zip(sessions, results, strict=True):
        chunk = result.chunk
        if chunk is not None and chunk.at_end and chunk.consumed == new.size:
            new.cwd = result.cwd
            new.chunk = chunk


@dataclass(slots=True)
class _Prepared:
    new: NewSession
    chunk: Chunk
    span: tuple[int, str | None, str | None]
    #: what the store writes of it
    stored: LegacySession


def stored_span(rows: list[EntryRow]) -> tuple[int, str | None, str | None]:
    """What a new execution's `rows` leave in the store (pure): how many rows (the first of
    each native id; a later one with the same id is not stored), and the least and greatest
    of their timestamps (None if none has one) — what `SET_TIMES`
    (`alpd.store.history.imports`) would read back."""
    seen: set[str] = set()
    stamps: list[str] = []
    for row in rows:
        native_id = row.key[1]
        if native_id in seen:
            continue
        seen.add(native_id)
        ts = row.values[_TS]
        if isinstance(ts, str):
            stamps.append(ts)
    return len(seen), min(stamps, default=None), max(stamps, default=None)


_TS: Final = ROW_COLUMNS.index("ts")


def legacy_policy(runtime: str, session: str) -> tuple[bytes, str]:
    """The honest minimal policy of an imported session (it grants nothing), and its hash."""
    document = canonical_json({"legacy": True, "runtime": runtime, "nativeSessionId": session})
    return document, sha256_digest(document)


async def write_batch(
    history: HistoryService, caller: Caller, runtime: str, fresh: list[NewSession]
) -> list[NewSession]:
    """Write the sessions read whole in one transaction, setting each one's `added`. Returns
    the ones another import took meanwhile (for the one-by-one path)."""
    at = history.d.clock.now_iso()
    prices = history.ex.agents.runtime(runtime).prices
    origin = msgspec.json.encode(m.Origin(door="import", by=f"uid:{caller.uid}")).decode()
    prepared = []
    for new in fresh:
        assert new.chunk is not None
        chunk = new.chunk
        usage = msgspec.json.encode(chunk.usage).decode()
        cursor = Cursor(
            execution_id=new.execution_id,
            path=str(new.path),
            format=runtime,
            consumed=chunk.consumed,
            session_id=chunk.session_id,
            model=chunk.model,
            skipped=chunk.skipped,
            redactions=chunk.redactions,
            usage=usage,
            cost_usd=chunk.cost_usd,
            updated_at=at,
            prefix_digest=chunk.prefix,
        )
        cost = chunk.cost_usd
        if cost is None:
            cost = price_cost(chunk.usage, cursor.model, prices)
        policy, digest = legacy_policy(runtime, new.session)
        execution = LegacyExecution(
            id=new.execution_id,
            owner_uid=caller.uid,
            runtime=runtime,
            origin=origin,
            policy=policy,
            policy_hash=digest,
            cwd=new.cwd,
            session=new.session,
            transcript_path=str(new.path),
            at=at,
        )
        span = stored_span(chunk.rows)
        stored = LegacySession(
            execution=execution,
            usage=cursor.usage,
            cost=cost,
            level=new.level,
            skipped=chunk.skipped,
            started_at=span[1],
            settled_at=span[2],
            parent_session_id=chunk.parent_session_id,
            rows=chunk.rows,
            cursor=cursor,
        )
        prepared.append(_Prepared(new, chunk, span, stored))

    held = await history.write_blocking(
        partial(write_legacy_batch, sessions=[p.stored for p in prepared])
    )
    for p in prepared:
        if p.new.session not in held:
            p.new.added = p.span[0]  # the execution is new: every row it stores was added
    taken = [p.new for p in prepared if p.new.session in held]
    for p in prepared:
        if p.chunk.redactions and p.new not in taken:
            log.info("history_redacted", execution=p.new.execution_id, findings=p.chunk.redactions)
    return taken
