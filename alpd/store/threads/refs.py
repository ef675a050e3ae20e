"""Threads found by how a person names them: by id, by an id prefix, by title, by words of
their title, or as the one last touched in a workspace."""

from __future__ import annotations

import sqlite3
from typing import NamedTuple

from alpd.store.db import Store

__all__ = [
    "NamedThread",
    "ids_starting",
    "last_touched",
    "named_thread",
    "recent_titled",
    "threads_titled",
    "titles_containing",
]

_COLUMNS = "id, owner_uid, title, status, workspace, updated_at"


class NamedThread(NamedTuple):
    """What a thread named by id or title is told apart by."""

    id: str
    owner_uid: int
    title: str | None
    status: str
    workspace: str
    updated_at: str


def _named(row: sqlite3.Row) -> NamedThread:
    return NamedThread(
        row["id"],
        row["owner_uid"],
        row["title"],
        row["status"],
        row["workspace"],
        row["updated_at"],
    )


async def named_thread(store: Store, thread_id: str) -> NamedThread | None:
    """The thread of this id, whoever owns it."""
    row = await store.fetchone(f"SELECT {_COLUMNS} FROM threads WHERE id = ?", (thread_id,))
    return None if row is None else _named(row)


async def threads_titled(
    store: Store, owner_uid: int, title: str, *, ignore_case: bool, limit: int
) -> list[NamedThread]:
    """The owner's threads that are not archived titled `title` (exactly, or ignoring case),
    newest update first."""
    clause = "lower(title) = lower(?)" if ignore_case else "title = ?"
    rows = await store.fetchall(
        f"SELECT {_COLUMNS} FROM threads WHERE owner_uid = ? AND status != 'archived' "
        f"AND {clause} ORDER BY updated_at DESC LIMIT ?",
        (owner_uid, title, limit),
    )
    return [_named(row) for row in rows]


async def titles_containing(
    store: Store, owner_uid: int, words: str, *, limit: int
) -> list[NamedThread]:
    """The owner's threads that are not archived whose title contains `words`, ignoring case,
    newest update first."""
    rows = await store.fetchall(
        f"SELECT {_COLUMNS} FROM threads WHERE owner_uid = ? AND status != 'archived' "
        "AND instr(lower(title), lower(?)) > 0 ORDER BY updated_at DESC LIMIT ?",
        (owner_uid, words, limit),
    )
    return [_named(row) for row in rows]


async def recent_titled(store: Store, owner_uid: int, *, limit: int) -> list[NamedThread]:
    """The owner's titled threads that are not archived, newest update first, at most
    `limit` (what a mistyped title is compared with)."""
    rows = await store.fetchall(
        f"SELECT {_COLUMNS} FROM threads WHERE owner_uid = ? AND status != 'archived' "
        "AND title IS NOT NULL AND title != '' ORDER BY updated_at DESC LIMIT ?",
        (owner_uid, limit),
    )
    return [_named(row) for row in rows]


async def ids_starting(
    store: Store, owner_uid: int, prefix: str, *, limit: int
) -> list[NamedThread]:
    """The owner's threads (any status) whose id starts with `prefix`, newest update first.
    Ids are lowercase Crockford base32 after their prefix, so `~` sorts after every one."""
    rows = await store.fetchall(
        f"SELECT {_COLUMNS} FROM threads WHERE owner_uid = ? AND id >= ? AND id < ? "
        "ORDER BY updated_at DESC LIMIT ?",
        (owner_uid, prefix, prefix + "~", limit),
    )
    return [_named(row) for row in rows]


async def last_touched(
    store: Store, owner_uid: int, workspaces: list[str] | None
) -> NamedThread | None:
    """The owner's thread that is not archived written last (its `updated_at`), among those
    whose workspace is one of `workspaces` (None: any workspace)."""
    args: tuple[str, ...] = ()
    if workspaces is None:
        where = ""
    else:
        where = f"AND workspace IN ({', '.join('?' * len(workspaces))}) "
        args = tuple(workspaces)
    row = await store.fetchone(
        f"SELECT {_COLUMNS} FROM threads WHERE owner_uid = ? AND status != 'archived' "
        f"{where}ORDER BY updated_at DESC, id DESC LIMIT 1",
        (owner_uid, *args),
    )
    return None if row is None else _named(row)
