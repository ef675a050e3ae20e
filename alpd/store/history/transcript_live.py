"""Where a running root's new items go (`thread/transcript`'s live path): the thread, owner
and sequence an execution's items show under, and the last entry copied of it."""

from __future__ import annotations

from dataclasses import dataclass

from alpd.store.db import Store

__all__ = ["RootPlace", "last_entry", "root_of", "root_place"]


@dataclass(frozen=True, slots=True)
class RootPlace:
    """Where an execution's entries show: its root's thread, owner and sequence."""

    thread_id: str
    owner_uid: int
    sequence: int


async def root_of(store: Store, execution_id: str) -> RootPlace | None:
    """Where `execution_id`'s entries show, when it is a root of a thread (None: a child,
    a temp run, a legacy execution)."""
    row = await store.fetchone(
        "SELECT thread_id, owner_uid, sequence FROM executions WHERE id = ?1 "
        "AND is_root = 1 AND thread_id IS NOT NULL AND sequence IS NOT NULL",
        (execution_id,),
    )
    return None if row is None else RootPlace(row[0], row[1], row[2])


async def root_place(store: Store, execution_id: str) -> RootPlace | None:
    """Where the items of `execution_id` (a root, or a sub-agent's child) show: its root's
    thread, owner and sequence (None: not in a thread's root)."""
    row = await store.fetchone(
        "SELECT r.thread_id, r.owner_uid, r.sequence FROM executions e "
        "JOIN executions r ON r.id = e.root_id WHERE e.id = ?1 "
        "AND r.is_root = 1 AND r.thread_id IS NOT NULL AND r.sequence IS NOT NULL",
        (execution_id,),
    )
    return None if row is None else RootPlace(row[0], row[1], row[2])


async def last_entry(store: Store, execution_id: str) -> int:
    """The execution's largest entry id (0: none yet)."""
    row = await store.fetchone(
        "SELECT coalesce(max(id), 0) FROM history_entries WHERE execution_id = ?",
        (execution_id,),
    )
    return int(row[0]) if row else 0
