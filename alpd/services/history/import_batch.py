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

import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import msgspec
import structlog

from alpd.domain.canonical import canonical_json, sha256_digest
from alpd.services.context import Caller
from alpd.services.history.chunks import CHUNK_BYTES, Chunk
from alpd.services.history.read_process import TranscriptReader
from alpd.services.history.read_worker import ReadFile
from alpd.services.history.sync import HistoryService, price_cost
from alpd.store.entry_rows import ROW_COLUMNS, EntryRow
from alpd.store.history import UPSERT_CURSOR, Cursor, insert_entries
from protocol import messages as m

__all__ = [
    "BATCH_BYTES",
    "BATCH_FILES",
    "SET_TIMES",
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
    cursor: Cursor
    cost: float | None
    span: tuple[int, str | None, str | None]


def stored_span(rows: list[EntryRow]) -> tuple[int, str | None, str | None]:
    """What a new execution's `rows` leave in the store (pure): how many rows (the first of
    each native id; a later one with the same id is not stored), and the least and greatest
    of their timestamps (None if none has one) — what `SET_TIMES` would read back."""
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


_INSERT_EXECUTION: Final = (
    "INSERT INTO executions (id, owner_uid, thread_id, is_root, root_id, runtime, agent, kind, "
    "origin, headless, status, policy, policy_hash, cwd, exec_dir, native_session_id, "
    "transcript_path, usage, cost_usd, history_level, history_skipped, created_at, started_at, "
    "settled_at) VALUES (?, ?, NULL, 1, ?, ?, ?, 'interactive', ?, 0, 'settled', ?, ?, ?, '', "
    "?, ?, ?, ?, ?, ?, ?, ?, coalesce(?, ?))"
)
_TS: Final = ROW_COLUMNS.index("ts")

#: a legacy execution ran when its entries were written, not when it was imported
SET_TIMES: Final = (
    "UPDATE executions SET "
    "started_at = coalesce((SELECT min(ts) FROM history_entries WHERE execution_id = ?1), "
    "started_at), "
    "settled_at = coalesce((SELECT max(ts) FROM history_entries WHERE execution_id = ?1), "
    "settled_at) WHERE id = ?1"
)


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
        )
        cost = chunk.cost_usd
        if cost is None:
            cost = price_cost(chunk.usage, cursor.model, prices)
        prepared.append(_Prepared(new, chunk, cursor, cost, stored_span(chunk.rows)))

    def unit(conn: sqlite3.Connection) -> list[NewSession]:
        marks = ", ".join("?" * len(prepared))
        taken = {
            row[0]
            for row in conn.execute(
                f"SELECT DISTINCT native_session_id FROM executions WHERE native_session_id IN "
                f"({marks})",
                [p.new.session for p in prepared],
            )
        }
        todo = [p for p in prepared if p.new.session not in taken]
        if not todo:
            return [p.new for p in prepared]
        executions = []
        for p in todo:
            policy, digest = legacy_policy(runtime, p.new.session)
            executions.append(
                (
                    p.new.execution_id,
                    caller.uid,
                    p.new.execution_id,
                    runtime,
                    runtime,
                    origin,
                    policy,
                    digest,
                    p.new.cwd,
                    p.new.session,
                    str(p.new.path),
                    p.cursor.usage,
                    p.cost,
                    p.new.level,
                    p.chunk.skipped,
                    at,
                    # a legacy execution ran when its entries were written (`SET_TIMES`)
                    p.span[1],
                    p.span[2],
                    at,
                )
            )
        conn.executemany(_INSERT_EXECUTION, executions)
        insert_entries(conn, [r for p in todo for r in p.chunk.rows])
        for p in todo:
            p.new.added = p.span[0]  # the execution is new: every row it stores was added
        for p in todo:
            if p.chunk.parent_session_id:
                # A fork's parent, imported earlier (maybe in this very transaction).
                parent = conn.execute(
                    "SELECT id FROM executions WHERE native_session_id = ? AND id != ? "
                    "ORDER BY created_at LIMIT 1",
                    (p.chunk.parent_session_id, p.new.execution_id),
                ).fetchone()
                if parent is not None:
                    p.cursor.links_to, p.cursor.link_kind = parent[0], "fork"
        conn.executemany(UPSERT_CURSOR, [p.cursor.values() for p in todo])
        return [p.new for p in prepared if p.new.session in taken]

    taken = await history.write_blocking(unit)
    for p in prepared:
        if p.chunk.redactions and p.new not in taken:
            log.info("history_redacted", execution=p.new.execution_id, findings=p.chunk.redactions)
    return taken
