"""Use cases of a Thread's outer shell: create, list, show, close, archive.

Every write to a thread bumps its revision by exactly one inside the write's own
transaction (`bump_revision`), optionally guarded by the caller's `ifRevision`.

A close stops the thread's schedules in its own transaction; whoever announces schedules
registers in `on_schedules_stopped` and is told which ones, once the close is committed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable
from typing import Any

import aiosqlite

from alpd.domain.ids import THREAD_PREFIX
from alpd.domain.secrets.filter import redact
from alpd.errors import (
    PermissionDenied,
    ThreadBusy,
    ThreadClosed,
    ThreadNotClosed,
    ThreadNotFound,
    ThreadRevisionConflict,
)
from alpd.services.context import Caller, Daemon
from alpd.services.threads.snapshots import insert_genesis
from alpd.store.recap import STANDS
from alpd.workspace import workspace_of
from protocol import jsonrpc
from protocol.messages import (
    Kind,
    Thread,
    ThreadChanged,
    ThreadCreateParams,
    ThreadListParams,
    ThreadListResult,
    ThreadRef,
)

_THREAD_COLUMNS = """
    t.id, t.owner_uid, t.title, t.workspace, t.status, t.revision, t.context_revision,
    t.created_at, t.updated_at, t.closed_at, t.archived_at
"""


def thread_from_row(
    row: sqlite3.Row,
    busy_root: str | None = None,
    root_count: int = 0,
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
        busy_root=busy_root,
        root_count=root_count,
        last_kind=last_kind,
        headline=headline,
    )


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


def _found(row: sqlite3.Row | None, thread_id: str) -> sqlite3.Row:
    if row is None:
        raise ThreadNotFound(
            f"no thread {thread_id!r}; `alp thread list --all` shows yours", threadId=thread_id
        )
    return row


async def load_thread_row(conn: aiosqlite.Connection, thread_id: str) -> sqlite3.Row:
    """The thread's row inside a write unit (THREAD_NOT_FOUND when there is none)."""
    async with conn.execute(_THREAD_BY_ID, (thread_id,)) as cur:
        return _found(await cur.fetchone(), thread_id)


async def busy_root(conn: aiosqlite.Connection, thread_id: str) -> str | None:
    """The thread's unsettled root, if any (there is at most one: invariant 4)."""
    async with conn.execute(
        "SELECT id FROM executions WHERE thread_id = ? AND is_root = 1 AND status != 'settled'",
        (thread_id,),
    ) as cur:
        row = await cur.fetchone()
    return None if row is None else str(row["id"])


async def refuse_if_busy(conn: aiosqlite.Connection, thread_id: str) -> None:
    """THREAD_BUSY, naming the root, when the thread has an unsettled root.

    Called inside the write unit that would add or move past a root: the unit's
    `BEGIN IMMEDIATE` serialises writers, so no check outside a transaction can race it."""
    busy = await busy_root(conn, thread_id)
    if busy is not None:
        raise ThreadBusy(
            f"thread {thread_id} is running root {busy}; wait for it, "
            f"or `alp thread reconcile {thread_id}` if it died",
            threadId=thread_id,
            busyRoot=busy,
        )


def check_owner(row: sqlite3.Row, caller: Caller) -> None:
    if row["owner_uid"] != caller.uid:
        raise PermissionDenied(f"thread {row['id']} belongs to another user", threadId=row["id"])


async def bump_revision(
    conn: aiosqlite.Connection,
    thread_id: str,
    change: str,
    at: str,
    *,
    if_revision: int | None = None,
    detail: str | None = None,
    sets: dict[str, Any] | None = None,
) -> int:
    """Advance the thread's revision by one (the only way a thread row changes)."""
    assignments = "".join(f", {column} = ?" for column in (sets or {}))
    values = list((sets or {}).values())
    sql = (
        f"UPDATE threads SET revision = revision + 1, updated_at = ?{assignments} "
        "WHERE id = ? AND (? IS NULL OR revision = ?) RETURNING revision"
    )
    async with conn.execute(sql, (at, *values, thread_id, if_revision, if_revision)) as cur:
        row = await cur.fetchone()
    if row is None:
        current = await load_thread_row(conn, thread_id)
        raise ThreadRevisionConflict(
            f"thread {thread_id} is at revision {current['revision']}, not {if_revision}; "
            "show it again and retry",
            threadId=thread_id,
            currentRevision=current["revision"],
            expectedRevision=if_revision,
        )
    revision = int(row[0])
    await conn.execute(
        "INSERT INTO thread_revisions (thread_id, revision, change, at, detail) "
        "VALUES (?, ?, ?, ?, ?)",
        (thread_id, revision, change, at, detail),
    )
    return revision


#: told which schedules a close stopped: (the caller who closed the thread, their ids)
SchedulesStopped = Callable[[Caller, list[str]], Awaitable[None]]


class ThreadService:
    def __init__(self, daemon: Daemon) -> None:
        self.d = daemon
        self.on_schedules_stopped: list[SchedulesStopped] = []

    def publish(self, thread: Thread, change: str) -> None:
        frame = jsonrpc.encode_notification(
            "thread/changed", ThreadChanged(thread=thread, change=change)
        )
        self.d.events.publish("thread/changed", frame, thread.id)

    async def create(self, caller: Caller, params: ThreadCreateParams) -> Thread:
        workspace = params.workspace or workspace_of(params.cwd or "/")
        thread_id = self.d.clock.new_id(THREAD_PREFIX)
        at = self.d.clock.now_iso()
        title = redact(params.title).text if params.title else params.title

        async def unit(conn: aiosqlite.Connection) -> Thread:
            await conn.execute(
                "INSERT INTO threads (id, owner_uid, title, workspace, status, revision, "
                "created_at, updated_at) VALUES (?, ?, ?, ?, 'open', 1, ?, ?)",
                (thread_id, caller.uid, title, workspace, at, at),
            )
            await conn.execute(
                "INSERT INTO thread_revisions (thread_id, revision, change, at) "
                "VALUES (?, 1, 'created', ?)",
                (thread_id, at),
            )
            await insert_genesis(conn, thread_id, at)
            return thread_from_row(await load_thread_row(conn, thread_id))

        thread = await self.d.store.write(unit)
        self.publish(thread, "created")
        return thread

    async def list(self, caller: Caller, params: ThreadListParams) -> ThreadListResult:
        """Open threads of the caller's workspace by default; `statuses` widens or narrows,
        `all` takes every workspace and (unless narrowed) every status."""
        clauses = ["t.owner_uid = ?"]
        args: list[Any] = [caller.uid]
        if not params.all:
            clauses.append("t.workspace = ?")
            args.append(params.workspace or workspace_of(params.cwd or "/"))
        statuses = params.statuses
        if statuses is None and params.status is not None:
            statuses = [params.status]
        if statuses is None and not params.all:
            statuses = ["open"]
        if statuses is not None:
            clauses.append(f"t.status IN ({', '.join('?' * len(statuses))})")
            args.extend(statuses)
        args.append(max(1, min(params.limit, 10_000)))
        rows = await self.d.store.fetchall(
            f"SELECT {_THREAD_COLUMNS}, ({_BUSY_ROOT}) AS busy_root, ({_LAST_KIND}) AS last_kind, "
            f"(SELECT r.headline FROM recaps r WHERE r.thread_id = t.id AND {STANDS}) AS headline "
            "FROM threads t "
            f"WHERE {' AND '.join(clauses)} ORDER BY t.updated_at DESC, t.id DESC LIMIT ?",
            args,
        )
        return ThreadListResult(
            threads=[
                thread_from_row(
                    row,
                    busy_root=row["busy_root"],
                    last_kind=row["last_kind"],
                    headline=row["headline"],
                )
                for row in rows
            ]
        )

    async def get(self, caller: Caller, thread_id: str) -> Thread:
        row = _found(await self.d.store.fetchone(_THREAD_BY_ID, (thread_id,)), thread_id)
        check_owner(row, caller)
        return thread_from_row(row)

    async def close(self, caller: Caller, ref: ThreadRef) -> Thread:
        """Close for good (no reopen); refused while a root still runs. Its schedules stop in
        the same transaction, with the reason: nothing can run in a closed thread any more,
        so a schedule must not wait for its next fire to find that out."""

        def check(row: sqlite3.Row) -> None:
            if row["status"] != "open":
                raise ThreadClosed(
                    f"thread {ref.thread_id} is already {row['status']}", threadId=ref.thread_id
                )

        stopped: list[str] = []

        async def stop_schedules(conn: aiosqlite.Connection, at: str) -> None:
            async with conn.execute(
                "UPDATE schedules SET status = 'stopped', stop_reason = ?, next_fire_at = NULL, "
                "firing_at = NULL, updated_at = ? "
                "WHERE thread_id = ? AND status IN ('active', 'paused') RETURNING id",
                (f"thread {ref.thread_id} was closed", at, ref.thread_id),
            ) as cur:
                stopped[:] = [row["id"] for row in await cur.fetchall()]

        thread = await self._move(caller, ref, "closed", check, also=stop_schedules)
        if stopped:
            for listener in self.on_schedules_stopped:
                await listener(caller, stopped)
        return thread

    async def archive(self, caller: Caller, ref: ThreadRef) -> Thread:
        """Archive a closed thread (THREAD_NOT_CLOSED otherwise)."""

        def check(row: sqlite3.Row) -> None:
            if row["status"] != "closed":
                raise ThreadNotClosed(
                    f"thread {ref.thread_id} is {row['status']}; "
                    "close it first (`alp thread close`)",
                    threadId=ref.thread_id,
                    status=row["status"],
                )

        return await self._move(caller, ref, "archived", check)

    async def _move(
        self,
        caller: Caller,
        ref: ThreadRef,
        status: str,
        check: Callable[[sqlite3.Row], None],
        also: Callable[[aiosqlite.Connection, str], Awaitable[None]] | None = None,
    ) -> Thread:
        at = self.d.clock.now_iso()

        async def unit(conn: aiosqlite.Connection) -> Thread:
            row = await load_thread_row(conn, ref.thread_id)
            check_owner(row, caller)
            check(row)
            await bump_revision(
                conn,
                ref.thread_id,
                status,
                at,
                if_revision=ref.if_revision,
                sets={"status": status, f"{status}_at": at},
            )
            await refuse_if_busy(conn, ref.thread_id)
            if also is not None:
                await also(conn, at)
            return thread_from_row(await load_thread_row(conn, ref.thread_id))

        thread = await self.d.store.write(unit)
        self.publish(thread, status)
        return thread
