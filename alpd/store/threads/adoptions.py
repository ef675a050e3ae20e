"""`thread/adopt`'s reads: the imported session asked for, whether a root already reads it,
and what its new root is given from it (its first prompt, its entry count, its level).

An adopted root is found by its origin's `adoptedFrom` (written by the daemon, inside the
root's hashed policy): no column of its own, so nothing a client can set apart from it.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from alpd.store.db import Store, Tx
from alpd.store.runs import ExecutionRecord, execution_record

__all__ = ["Adoption", "adoption_of", "first_prompt", "sessions_named", "set_history_level"]

_ADOPTION: Final = (
    "SELECT id, thread_id, sequence FROM executions WHERE is_root = 1 "
    "AND thread_id IS NOT NULL AND json_extract(origin, '$.adoptedFrom') = ? "
    "ORDER BY created_at LIMIT 1"
)


async def sessions_named(store: Store, name: str) -> list[ExecutionRecord]:
    """The executions `name` may mean: the one with that id, else those holding that
    native session id (legacy-unthreaded first, then by age)."""
    rows = await store.fetchall(
        "SELECT * FROM executions WHERE id = ?1 OR native_session_id = ?1 "
        "ORDER BY id = ?1 DESC, thread_id IS NOT NULL, created_at LIMIT 10",
        (name,),
    )
    return [execution_record(row) for row in rows]


class Adoption(NamedTuple):
    """The root that reads an imported session."""

    execution_id: str
    thread_id: str
    sequence: int


async def adoption_of(tx: Tx, legacy_id: str) -> Adoption | None:
    """The root adopted from `legacy_id`, if any (read inside the unit that would add one:
    `BEGIN IMMEDIATE` serialises two adoptions of the same session)."""
    async with tx.execute(_ADOPTION, (legacy_id,)) as cur:
        row = await cur.fetchone()
    return None if row is None else Adoption(row[0], row[1], row[2])


async def first_prompt(store: Store, execution_id: str) -> str | None:
    """The first prompt of an execution's history (stored secret-filtered)."""
    row = await store.fetchone(
        "SELECT text FROM history_entries WHERE execution_id = ? AND kind = 'prompt' "
        "AND text IS NOT NULL AND text != '' ORDER BY id LIMIT 1",
        (execution_id,),
    )
    return None if row is None else str(row[0])


async def set_history_level(tx: Tx, execution_id: str, level: str | None) -> None:
    """The adopted root's history level is its session's: the sync has nothing to copy for
    it (its entries are the session's), so it must not take it for an unfinished first sync."""
    await tx.execute(
        "UPDATE executions SET history_level = coalesce(?, 'complete'), history_skipped = 0 "
        "WHERE id = ?",
        (level, execution_id),
    )
