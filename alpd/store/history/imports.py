"""An import's statements (`alpd.services.history.importer`, `import_batch`): legacy
executions, one by one or a whole batch of new sessions in one blocking unit
(`write_legacy_batch`, one hop to the writer's thread)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, NamedTuple

from alpd.store.db import BlockingTx, Store, Tx
from alpd.store.entry_rows import EntryRow
from alpd.store.history.entries import insert_entries
from alpd.store.history.sync import UPSERT_CURSOR, Cursor

__all__ = [
    "SET_TIMES",
    "LegacyExecution",
    "LegacySession",
    "SessionHolder",
    "entry_count",
    "holder_of_session",
    "insert_legacy_execution",
    "known_sessions",
    "set_legacy_times",
    "write_legacy_batch",
]

#: a legacy execution ran when its entries were written, not when it was imported
SET_TIMES: Final = (
    "UPDATE executions SET "
    "started_at = coalesce((SELECT min(ts) FROM history_entries WHERE execution_id = ?1), "
    "started_at), "
    "settled_at = coalesce((SELECT max(ts) FROM history_entries WHERE execution_id = ?1), "
    "settled_at) WHERE id = ?1"
)

_INSERT_EXECUTION: Final = (
    "INSERT INTO executions (id, owner_uid, thread_id, is_root, root_id, runtime, agent, kind, "
    "origin, headless, status, policy, policy_hash, cwd, exec_dir, native_session_id, "
    "transcript_path, usage, cost_usd, history_level, history_skipped, created_at, started_at, "
    "settled_at) VALUES (?, ?, NULL, 1, ?, ?, ?, 'interactive', ?, 0, 'settled', ?, ?, ?, '', "
    "?, ?, ?, ?, ?, ?, ?, ?, coalesce(?, ?))"
)


async def known_sessions(store: Store, sessions: Sequence[str]) -> set[str]:
    """Those of `sessions` an execution of any runtime holds."""
    if not sessions:
        return set()
    rows = await store.fetchall(
        "SELECT DISTINCT native_session_id FROM executions WHERE native_session_id IN "
        f"({', '.join('?' * len(sessions))})",
        sessions,
    )
    return {row[0] for row in rows}


class SessionHolder(NamedTuple):
    """The execution that holds a native session, and its thread (None: a legacy one)."""

    execution_id: str
    thread_id: str | None


async def holder_of_session(store: Store, session: str, runtime: str) -> SessionHolder | None:
    """The first execution of `runtime` that holds `session`."""
    row = await store.fetchone(
        "SELECT id, thread_id FROM executions WHERE native_session_id = ? AND runtime = ? "
        "ORDER BY created_at LIMIT 1",
        (session, runtime),
    )
    return None if row is None else SessionHolder(row["id"], row["thread_id"])


async def entry_count(store: Store, execution_id: str) -> int:
    """How many entries the execution holds."""
    row = await store.fetchone(
        "SELECT count(*) FROM history_entries WHERE execution_id = ?", (execution_id,)
    )
    return int(row[0]) if row else 0


@dataclass(frozen=True, slots=True)
class LegacyExecution:
    """A legacy-unthreaded execution: a settled interactive root of no thread."""

    id: str
    owner_uid: int
    runtime: str
    origin: str
    policy: bytes
    policy_hash: str
    cwd: str
    session: str
    transcript_path: str
    at: str


async def insert_legacy_execution(tx: Tx, execution: LegacyExecution) -> None:
    """Insert it, created and settled `at` (its times are set after its copy)."""
    e = execution
    await tx.execute(
        "INSERT INTO executions (id, owner_uid, thread_id, is_root, root_id, runtime, "
        "agent, kind, origin, headless, status, policy, policy_hash, cwd, exec_dir, "
        "native_session_id, transcript_path, created_at, settled_at) "
        "VALUES (?, ?, NULL, 1, ?, ?, ?, 'interactive', ?, 0, 'settled', ?, ?, ?, '', "
        "?, ?, ?, ?)",
        (
            e.id,
            e.owner_uid,
            e.id,
            e.runtime,
            e.runtime,
            e.origin,
            e.policy,
            e.policy_hash,
            e.cwd,
            e.session,
            e.transcript_path,
            e.at,
            e.at,
        ),
    )


async def set_legacy_times(tx: Tx, execution_id: str) -> None:
    """`SET_TIMES`: started and settled when its first and last entries were written."""
    await tx.execute(SET_TIMES, (execution_id,))


@dataclass(slots=True)
class LegacySession:
    """A new session of a batch, read whole: its execution, rows and cursor."""

    execution: LegacyExecution
    usage: str | None
    cost: float | None
    level: str
    skipped: int
    #: the least and greatest timestamps of its stored rows (`SET_TIMES` ahead of time)
    started_at: str | None
    settled_at: str | None
    parent_session_id: str | None
    rows: Sequence[EntryRow]
    #: its cursor; a fork's link to its parent is set here when the parent is found
    cursor: Cursor


def write_legacy_batch(conn: BlockingTx, sessions: Sequence[LegacySession]) -> set[str]:
    """Insert the batch's sessions that no execution holds yet, with their rows, index
    entries and cursors (blocking, in the caller's unit). Returns the sessions some
    execution already held: those are left out (for the one-by-one path)."""
    marks = ", ".join("?" * len(sessions))
    taken = {
        row[0]
        for row in conn.execute(
            f"SELECT DISTINCT native_session_id FROM executions WHERE native_session_id IN "
            f"({marks})",
            [s.execution.session for s in sessions],
        )
    }
    todo = [s for s in sessions if s.execution.session not in taken]
    if not todo:
        return taken
    executions = []
    for s in todo:
        e = s.execution
        executions.append(
            (
                e.id,
                e.owner_uid,
                e.id,
                e.runtime,
                e.runtime,
                e.origin,
                e.policy,
                e.policy_hash,
                e.cwd,
                e.session,
                e.transcript_path,
                s.usage,
                s.cost,
                s.level,
                s.skipped,
                e.at,
                # a legacy execution ran when its entries were written (`SET_TIMES`)
                s.started_at,
                s.settled_at,
                e.at,
            )
        )
    conn.executemany(_INSERT_EXECUTION, executions)
    insert_entries(conn, [r for s in todo for r in s.rows])
    for s in todo:
        if s.parent_session_id:
            # A fork's parent, imported earlier (maybe in this very transaction).
            parent = conn.execute(
                "SELECT id FROM executions WHERE native_session_id = ? AND id != ? "
                "ORDER BY created_at LIMIT 1",
                (s.parent_session_id, s.execution.id),
            ).fetchone()
            if parent is not None:
                s.cursor.links_to, s.cursor.link_kind = parent[0], "fork"
    conn.executemany(UPSERT_CURSOR, [s.cursor.values() for s in todo])
    return taken
