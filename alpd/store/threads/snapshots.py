"""The digest-chained snapshots of threads, their compaction records, the checkpoints of
executions, and the roots' bindings to the snapshots they read.

The rows are given as they are stored; verifying them (digests, links, bindings) is
`alpd.services.threads.snapshots`.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

import msgspec

from alpd.domain.canonical import canonical_json
from alpd.domain.threads.context import (
    Checkpoint,
    CompactionRecord,
    Snapshot,
    genesis,
    snapshot_bytes,
    snapshot_digest,
)
from alpd.domain.threads.steering import RootMark
from alpd.store.db import Store, Tx
from alpd.store.runs import ExecutionRecord, execution_record

__all__ = [
    "CompactionRow",
    "RootBinding",
    "SnapshotRow",
    "StoredCheckpoint",
    "compaction_rows",
    "execution_status",
    "executions_of_thread",
    "insert_compaction",
    "insert_genesis",
    "insert_snapshot",
    "root_bindings",
    "root_marks",
    "save_checkpoint",
    "snapshot_and_previous",
    "snapshots_upto",
    "stored_checkpoint",
    "thread_roots",
]


@dataclass(frozen=True, slots=True)
class SnapshotRow:
    """A stored snapshot: its canonical bytes, their digest, and its predecessor's digest."""

    revision: int
    body: bytes
    digest: str
    previous_digest: str | None


@dataclass(frozen=True, slots=True)
class CompactionRow:
    """A stored compaction record beside the body of the snapshot it made."""

    revision: int
    body: bytes
    snapshot: bytes


@dataclass(frozen=True, slots=True)
class RootBinding:
    """The snapshot a root read, by revision and by the digest it had then."""

    id: str
    context_revision: int
    context_digest: str | None


@dataclass(frozen=True, slots=True)
class StoredCheckpoint:
    """A checkpoint as stored: its encoded body and the digest column."""

    body: bytes
    digest: str


async def insert_snapshot(tx: Tx, snapshot: Snapshot, at: str) -> str:
    """Store the snapshot as its thread's revision `snapshot.revision`: its digest."""
    digest = snapshot_digest(snapshot)
    await tx.execute(
        "INSERT INTO snapshots (thread_id, revision, body, digest, previous_digest, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (
            snapshot.thread_id,
            snapshot.revision,
            snapshot_bytes(snapshot),
            digest,
            snapshot.previous_digest,
            at,
        ),
    )
    return digest


async def insert_genesis(tx: Tx, thread_id: str, at: str) -> str:
    """Snapshot 0 of a new thread: its digest."""
    return await insert_snapshot(tx, genesis(thread_id), at)


async def insert_compaction(tx: Tx, thread_id: str, record: CompactionRecord, at: str) -> None:
    """The full record of the compaction that made snapshot `record.revision`."""
    await tx.execute(
        "INSERT INTO compactions (thread_id, revision, body, created_at) VALUES (?, ?, ?, ?)",
        (thread_id, record.revision, canonical_json(record), at),
    )


async def compaction_rows(tx: Tx, thread_id: str, upto: int) -> list[CompactionRow]:
    """The thread's compaction records up to revision `upto`, oldest first."""
    async with tx.execute(
        "SELECT c.revision, c.body, s.body AS snapshot FROM compactions c "
        "JOIN snapshots s USING (thread_id, revision) "
        "WHERE c.thread_id = ? AND c.revision <= ? ORDER BY c.revision",
        (thread_id, upto),
    ) as cur:
        rows = list(await cur.fetchall())
    return [
        CompactionRow(row["revision"], bytes(row["body"]), bytes(row["snapshot"])) for row in rows
    ]


def _snapshot_row(row: sqlite3.Row) -> SnapshotRow:
    return SnapshotRow(row["revision"], bytes(row["body"]), row["digest"], row["previous_digest"])


async def snapshot_and_previous(tx: Tx, thread_id: str, revision: int) -> list[SnapshotRow]:
    """Snapshots `revision - 1` and `revision` of the thread, those that exist, in order."""
    async with tx.execute(
        "SELECT revision, body, digest, previous_digest FROM snapshots "
        "WHERE thread_id = ? AND revision IN (?, ?) ORDER BY revision",
        (thread_id, revision - 1, revision),
    ) as cur:
        rows = list(await cur.fetchall())
    return [_snapshot_row(row) for row in rows]


async def snapshots_upto(tx: Tx, thread_id: str, upto: int) -> list[SnapshotRow]:
    """The thread's snapshots up to revision `upto`, in order."""
    async with tx.execute(
        "SELECT revision, body, digest, previous_digest FROM snapshots "
        "WHERE thread_id = ? AND revision <= ? ORDER BY revision",
        (thread_id, upto),
    ) as cur:
        rows = list(await cur.fetchall())
    return [_snapshot_row(row) for row in rows]


async def root_bindings(tx: Tx, thread_id: str) -> list[RootBinding]:
    """The bindings of the thread's roots that read a snapshot."""
    async with tx.execute(
        "SELECT id, context_revision, context_digest FROM executions "
        "WHERE thread_id = ? AND is_root = 1 AND context_revision IS NOT NULL",
        (thread_id,),
    ) as cur:
        rows = list(await cur.fetchall())
    return [RootBinding(row["id"], row["context_revision"], row["context_digest"]) for row in rows]


async def thread_roots(tx: Tx, thread_id: str) -> list[ExecutionRecord]:
    """Every root of the thread, whole (their policies are checked against the chain)."""
    async with tx.execute(
        "SELECT * FROM executions WHERE thread_id = ? AND is_root = 1", (thread_id,)
    ) as cur:
        rows = list(await cur.fetchall())
    return [execution_record(row) for row in rows]


async def executions_of_thread(store: Store, thread_id: str) -> list[ExecutionRecord]:
    """Every execution of the thread, read outside a unit: the roots first, by sequence, then
    the other runs."""
    rows = await store.fetchall(
        "SELECT * FROM executions WHERE thread_id = ? ORDER BY is_root DESC, sequence, created_at",
        (thread_id,),
    )
    return [execution_record(row) for row in rows]


async def root_marks(tx: Tx, thread_id: str) -> list[RootMark]:
    """The thread's roots, each with the revision its binding columns say it opened on."""
    async with tx.execute(
        "SELECT id, sequence, context_revision, status FROM executions "
        "WHERE thread_id = ? AND is_root = 1",
        (thread_id,),
    ) as cur:
        rows = list(await cur.fetchall())
    return [
        RootMark(
            execution_id=row["id"],
            sequence=row["sequence"],
            opened_on=row["context_revision"],
            settled=row["status"] == "settled",
        )
        for row in rows
    ]


async def save_checkpoint(tx: Tx, checkpoint: Checkpoint, at: str) -> None:
    """Store the execution's checkpoint, replacing the one it had."""
    await tx.execute(
        "INSERT INTO checkpoints (execution_id, body, digest, updated_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (execution_id) DO UPDATE SET body = excluded.body, "
        "digest = excluded.digest, updated_at = excluded.updated_at",
        (checkpoint.execution_id, msgspec.json.encode(checkpoint), checkpoint.digest, at),
    )


async def stored_checkpoint(tx: Tx, execution_id: str) -> StoredCheckpoint | None:
    """The execution's checkpoint as stored, undecoded; None when it has none."""
    async with tx.execute(
        "SELECT body, digest FROM checkpoints WHERE execution_id = ?", (execution_id,)
    ) as cur:
        row = await cur.fetchone()
    return None if row is None else StoredCheckpoint(bytes(row["body"]), row["digest"])


async def execution_status(tx: Tx, execution_id: str) -> str | None:
    """The execution's status (`reserved`, `running`, `settled`); None when there is none."""
    async with tx.execute(
        "SELECT status, outcome FROM executions WHERE id = ?", (execution_id,)
    ) as cur:
        row = await cur.fetchone()
    return None if row is None else str(row["status"])
