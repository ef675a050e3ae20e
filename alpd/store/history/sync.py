"""The history sync's statements: an execution's copy cursor, one chunk's commit, the
completeness level, and which executions a background pass syncs.

`commit_chunk` is the whole write of one chunk (the cursor check, the rows, the advanced
cursor, the usage and cost) as one blocking unit: one hop to the writer's thread
(`Store.write_blocking`), however many rows it inserts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, NamedTuple

from alpd.store.db import BlockingTx, Store, Tx
from alpd.store.entry_rows import EntryRow
from alpd.store.history.entries import insert_entries
from protocol import messages as m

__all__ = [
    "CURSOR_COLUMNS",
    "UPSERT_CURSOR",
    "Cursor",
    "CursorMoved",
    "CursorSeed",
    "SyncTarget",
    "commit_chunk",
    "cursor_seed",
    "first_holder",
    "load_cursor",
    "resumed_holder",
    "running_with_transcript",
    "set_history_level",
    "set_level_without_transcript",
    "settled_roots",
    "stored_offset",
    "sync_target",
    "unfinished_first_syncs",
]

CURSOR_COLUMNS: Final = (
    "execution_id, path, format, consumed, session_id, model, skipped, redactions, usage, "
    "cost_usd, links_to, link_kind, updated_at, prefix_digest"
)


@dataclass(slots=True)
class Cursor:
    """Where the copy of one execution's transcript stands (a `history_cursors` row)."""

    execution_id: str
    path: str
    format: str
    consumed: int = 0
    session_id: str | None = None
    model: str | None = None
    skipped: int = 0
    redactions: int = 0
    usage: str | None = None
    cost_usd: float | None = None
    links_to: str | None = None
    link_kind: str | None = None
    updated_at: str = ""
    #: a digest of the file up to `consumed` as it was read (`chunks.prefix_digest`): a
    #: resume checks it, and reads the file again from its start if it changed
    prefix_digest: str | None = None

    def values(self) -> tuple[object, ...]:
        return (
            self.execution_id,
            self.path,
            self.format,
            self.consumed,
            self.session_id,
            self.model,
            self.skipped,
            self.redactions,
            self.usage,
            self.cost_usd,
            self.links_to,
            self.link_kind,
            self.updated_at,
            self.prefix_digest,
        )


UPSERT_CURSOR: Final = (
    f"INSERT OR REPLACE INTO history_cursors ({CURSOR_COLUMNS}) "
    f"VALUES ({', '.join(['?'] * len(CURSOR_COLUMNS.split(',')))})"
)


@dataclass(frozen=True, slots=True)
class SyncTarget:
    """An execution as its history sync sees it."""

    id: str
    runtime: str
    status: str
    native_session_id: str | None
    transcript_path: str | None
    history_level: m.HistoryLevel | None
    history_skipped: int
    created_at: str


class CursorSeed(NamedTuple):
    """Where another execution's copy of the same file ended."""

    consumed: int
    session_id: str | None
    model: str | None
    prefix_digest: str | None


class CursorMoved(Exception):
    """Another sync advanced the cursor between our read and our write; re-read."""


async def sync_target(store: Store, execution_id: str) -> SyncTarget | None:
    row = await store.fetchone(
        "SELECT id, runtime, status, native_session_id, transcript_path, history_level, "
        "history_skipped, created_at FROM executions WHERE id = ?",
        (execution_id,),
    )
    return None if row is None else SyncTarget(*row)


async def load_cursor(store: Store, execution_id: str) -> Cursor | None:
    row = await store.fetchone(
        "SELECT * FROM history_cursors WHERE execution_id = ?", (execution_id,)
    )
    if row is None:
        return None
    return Cursor(**{key: row[key] for key in row.keys()})  # noqa: SIM118


async def stored_offset(store: Store, execution_id: str) -> int | None:
    """The stored cursor's offset, None without a cursor."""
    row = await store.fetchone(
        "SELECT consumed FROM history_cursors WHERE execution_id = ?", (execution_id,)
    )
    return None if row is None else int(row[0])


async def resumed_holder(
    store: Store, session_id: str, execution_id: str, created_at: str
) -> str | None:
    """The latest execution created before (or with) this one that holds its session."""
    earlier = await store.fetchone(
        "SELECT id FROM executions WHERE native_session_id = ? AND id != ? "
        "AND created_at <= ? ORDER BY created_at DESC LIMIT 1",
        (session_id, execution_id, created_at),
    )
    return None if earlier is None else str(earlier["id"])


async def cursor_seed(store: Store, path: str, execution_id: str) -> CursorSeed | None:
    """The furthest copy of `path` another execution made."""
    seed = await store.fetchone(
        "SELECT consumed, session_id, model, prefix_digest FROM history_cursors WHERE path = ? "
        "AND execution_id != ? ORDER BY consumed DESC LIMIT 1",
        (path, execution_id),
    )
    if seed is None:
        return None
    return CursorSeed(
        int(seed["consumed"]), seed["session_id"], seed["model"], seed["prefix_digest"]
    )


async def first_holder(store: Store, session_id: str, other_than: str) -> str | None:
    """The first execution that holds `session_id`, other than `other_than`."""
    found = await store.fetchone(
        "SELECT id FROM executions WHERE native_session_id = ? AND id != ? "
        "ORDER BY created_at LIMIT 1",
        (session_id, other_than),
    )
    return None if found is None else str(found["id"])


def commit_chunk(
    conn: BlockingTx,
    cursor: Cursor,
    expected: int | None,
    rows: Sequence[EntryRow],
    cost: float | None,
) -> int:
    """One chunk's write (blocking, in the caller's unit): `CursorMoved` unless the stored
    cursor is still at `expected`; then the rows, the advanced `cursor` and the execution's
    usage and `cost`. Returns how many entries were added."""
    found = conn.execute(
        "SELECT consumed FROM history_cursors WHERE execution_id = ?",
        (cursor.execution_id,),
    ).fetchone()
    if (None if found is None else int(found[0])) != expected:
        raise CursorMoved
    _, added = insert_entries(conn, rows)
    conn.execute(UPSERT_CURSOR, cursor.values())
    conn.execute(
        "UPDATE executions SET usage = ?, cost_usd = ? WHERE id = ?",
        (cursor.usage, cost, cursor.execution_id),
    )
    return added


async def set_history_level(tx: Tx, execution_id: str, level: m.HistoryLevel, skipped: int) -> None:
    await tx.execute(
        "UPDATE executions SET history_level = ?, history_skipped = ? WHERE id = ?",
        (level, skipped, execution_id),
    )


async def set_level_without_transcript(tx: Tx, execution_id: str, level: m.HistoryLevel) -> None:
    """The level of an execution with no transcript to copy (nothing skipped)."""
    await tx.execute(
        "UPDATE executions SET history_level = ?, history_skipped = 0 WHERE id = ?",
        (level, execution_id),
    )


async def settled_roots(store: Store, thread_id: str) -> list[str]:
    """The thread's settled roots, in order."""
    rows = await store.fetchall(
        "SELECT id FROM executions WHERE thread_id = ? AND is_root = 1 "
        "AND status = 'settled' ORDER BY sequence",
        (thread_id,),
    )
    return [row["id"] for row in rows]


async def running_with_transcript(store: Store) -> list[str]:
    """Unsettled executions whose transcript is known or can be found."""
    rows = await store.fetchall(
        "SELECT id FROM executions WHERE status != 'settled' "
        "AND (transcript_path IS NOT NULL OR native_session_id IS NOT NULL)"
    )
    return [row["id"] for row in rows]


async def unfinished_first_syncs(store: Store, limit: int) -> list[str]:
    """Settled executions whose first sync never finished (no level), oldest first."""
    rows = await store.fetchall(
        "SELECT id FROM executions WHERE status = 'settled' AND history_level IS NULL "
        "ORDER BY created_at LIMIT ?",
        (limit,),
    )
    return [row["id"] for row in rows]
