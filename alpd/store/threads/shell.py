"""The `threads` table: a thread's outer shell, its revisions, and the reads of it.

Every write to a thread bumps its revision by exactly one inside the write's own
transaction (`bump_revision`), optionally guarded by the caller's `ifRevision`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from alpd.errors import ThreadNotFound, ThreadRevisionConflict
from alpd.store.db import Store, Tx
from alpd.store.recap import STANDS
from protocol.messages import Kind, Thread

__all__ = [
    "bump_revision",
    "busy_root",
    "context_revision_of",
    "find_thread",
    "insert_thread",
    "list_threads",
    "load_thread",
    "stop_thread_schedules",
]

_THREAD_COLUMNS = """
    t.id, t.owner_uid, t.title, t.workspace, t.status, t.revision, t.context_revision,
    t.created_at, t.updated_at, t.closed_at, t.archived_at, t.workspace_remote,
    t.workspace_subpath
"""

#: the thread's unsettled root, as a correlated subquery of a thread row `t`
_BUSY_ROOT = (
    "SELECT e.id FROM executions e WHERE e.thread_id = t.id AND e.is_root = 1 "
    "AND e.status != 'settled' LIMIT 1"
)

#: the newest root's kind, read backwards along the UNIQUE (thread_id, sequence) index
_LAST_KIND = (
    "SELECT e.kind FROM executions e WHERE e.thread_id = t.id AND e.is_root = 1 "
    "ORDER BY e.sequence DESC LIMIT 1"
)

_THREAD_BY_ID = f"SELECT {_THREAD_COLUMNS} FROM threads t WHERE t.id = ?"


def _thread(
    row: sqlite3.Row,
    busy_root: str | None = None,
    last_kind: Kind | None = None,
    headline: str | None = None,
) -> Thread:
    return Thread(
        id=row["id"],
        title=row["title"],
        workspace=row["workspace"],
        status=row["status"],
        revision=row["revision"],
        context_revision=row["context_revision"],
        owner_uid=row["owner_uid"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        closed_at=row["closed_at"],
        archived_at=row["archived_at"],
        workspace_remote=row["workspace_remote"],
        workspace_subpath=row["workspace_subpath"],
        busy_root=busy_root,
        last_kind=last_kind,
        headline=headline,
    )


def _found(row: sqlite3.Row | None, thread_id: str) -> Thread:
    if row is None:
        raise ThreadNotFound(
            f"no thread {thread_id!r}; `alp thread list --all` shows yours", threadId=thread_id
        )
    return _thread(row)


async def load_thread(tx: Tx, thread_id: str) -> Thread:
    """The thread inside a write unit (THREAD_NOT_FOUND when there is none)."""
    async with tx.execute(_THREAD_BY_ID, (thread_id,)) as cur:
        return _found(await cur.fetchone(), thread_id)


async def find_thread(store: Store, thread_id: str) -> Thread:
    """The thread, read outside a unit (THREAD_NOT_FOUND when there is none)."""
    return _found(await store.fetchone(_THREAD_BY_ID, (thread_id,)), thread_id)


async def context_revision_of(tx: Tx, thread_id: str) -> int | None:
    """The thread's newest context revision; None when there is no such thread."""
    async with tx.execute("SELECT context_revision FROM threads WHERE id = ?", (thread_id,)) as cur:
        row = await cur.fetchone()
    return None if row is None else int(row["context_revision"])


async def list_threads(
    store: Store,
    owner_uid: int,
    *,
    workspace: str | None,
    statuses: Sequence[str] | None,
    limit: int,
) -> list[Thread]:
    """The owner's threads, newest update first, each with its busy root, the kind of its
    newest root and the headline of its recap if that stands; only those of `workspace` and
    of `statuses` unless they are None."""
    clauses = ["t.owner_uid = ?"]
    args: list[Any] = [owner_uid]
    if workspace is not None:
        clauses.append("t.workspace = ?")
        args.append(workspace)
    if statuses is not None:
        clauses.append(f"t.status IN ({', '.join('?' * len(statuses))})")
        args.extend(statuses)
    args.append(limit)
    rows = await store.fetchall(
        f"SELECT {_THREAD_COLUMNS}, ({_BUSY_ROOT}) AS busy_root, ({_LAST_KIND}) AS last_kind, "
        f"(SELECT r.headline FROM recaps r WHERE r.thread_id = t.id AND {STANDS}) AS headline "
        "FROM threads t "
        f"WHERE {' AND '.join(clauses)} ORDER BY t.updated_at DESC, t.id DESC LIMIT ?",
        args,
    )
    return [
        _thread(
            row, busy_root=row["busy_root"], last_kind=row["last_kind"], headline=row["headline"]
        )
        for row in rows
    ]


async def insert_thread(
    tx: Tx,
    thread_id: str,
    *,
    owner_uid: int,
    title: str | None,
    workspace: str,
    at: str,
    repository: tuple[str, str] | None = None,
) -> None:
    """A new open thread at revision 1, with its `created` revision row; `repository`: its
    workspace's (remote, path within the checkout), when it is a checkout with a remote."""
    remote, subpath = repository if repository is not None else (None, None)
    await tx.execute(
        "INSERT INTO threads (id, owner_uid, title, workspace, status, revision, "
        "created_at, updated_at, workspace_remote, workspace_subpath) "
        "VALUES (?, ?, ?, ?, 'open', 1, ?, ?, ?, ?)",
        (thread_id, owner_uid, title, workspace, at, at, remote, subpath),
    )
    await tx.execute(
        "INSERT INTO thread_revisions (thread_id, revision, change, at) "
        "VALUES (?, 1, 'created', ?)",
        (thread_id, at),
    )


async def busy_root(tx: Tx, thread_id: str) -> str | None:
    """The thread's unsettled root, if any (there is at most one: invariant 4)."""
    async with tx.execute(
        "SELECT id FROM executions WHERE thread_id = ? AND is_root = 1 AND status != 'settled'",
        (thread_id,),
    ) as cur:
        row = await cur.fetchone()
    return None if row is None else str(row["id"])


async def bump_revision(
    tx: Tx,
    thread_id: str,
    change: str,
    at: str,
    *,
    if_revision: int | None = None,
    detail: str | None = None,
    sets: dict[str, Any] | None = None,
) -> int:
    """Advance the thread's revision by one (the only way a thread row changes), setting the
    columns of `sets` too: THREAD_REVISION_CONFLICT when `if_revision` is not the current one."""
    assignments = "".join(f", {column} = ?" for column in (sets or {}))
    values = list((sets or {}).values())
    sql = (
        f"UPDATE threads SET revision = revision + 1, updated_at = ?{assignments} "
        "WHERE id = ? AND (? IS NULL OR revision = ?) RETURNING revision"
    )
    async with tx.execute(sql, (at, *values, thread_id, if_revision, if_revision)) as cur:
        row = await cur.fetchone()
    if row is None:
        current = await load_thread(tx, thread_id)
        raise ThreadRevisionConflict(
            f"thread {thread_id} is at revision {current.revision}, not {if_revision}; "
            "show it again and retry",
            threadId=thread_id,
            currentRevision=current.revision,
            expectedRevision=if_revision,
        )
    revision = int(row[0])
    await tx.execute(
        "INSERT INTO thread_revisions (thread_id, revision, change, at, detail) "
        "VALUES (?, ?, ?, ?, ?)",
        (thread_id, revision, change, at, detail),
    )
    return revision


async def stop_thread_schedules(tx: Tx, thread_id: str, reason: str, at: str) -> list[str]:
    """Stop the thread's active and paused schedules, with `reason`: the ids stopped."""
    async with tx.execute(
        "UPDATE schedules SET status = 'stopped', stop_reason = ?, next_fire_at = NULL, "
        "firing_at = NULL, updated_at = ? "
        "WHERE thread_id = ? AND status IN ('active', 'paused') RETURNING id",
        (reason, at, thread_id),
    ) as cur:
        return [row["id"] for row in await cur.fetchall()]
