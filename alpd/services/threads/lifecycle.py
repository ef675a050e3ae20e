"""Use cases of a Thread's outer shell: create, list, show, close, archive.

Every write to a thread bumps its revision by exactly one inside the write's own
transaction (`alpd.store.threads.shell.bump_revision`), optionally guarded by the caller's
`ifRevision`.

A close stops the thread's schedules in its own transaction; whoever announces schedules
registers in `on_schedules_stopped` and is told which ones, once the close is committed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

import anyio

from alpd.domain.ids import THREAD_PREFIX
from alpd.domain.secrets.filter import redact
from alpd.errors import (
    PermissionDenied,
    ThreadBusy,
    ThreadClosed,
    ThreadNotClosed,
)
from alpd.services.context import Caller, Daemon
from alpd.store.db import Tx
from alpd.store.threads.shell import (
    bump_revision,
    busy_root,
    find_thread,
    insert_thread,
    list_threads,
    load_thread,
    stop_thread_schedules,
)
from alpd.store.threads.snapshots import insert_genesis
from alpd.workspace import repository_of, workspace_of
from protocol import jsonrpc
from protocol.messages import (
    Thread,
    ThreadChanged,
    ThreadCreateParams,
    ThreadListParams,
    ThreadListResult,
    ThreadRef,
)


async def refuse_if_busy(tx: Tx, thread_id: str) -> None:
    """THREAD_BUSY, naming the root, when the thread has an unsettled root.

    Called inside the write unit that would add or move past a root: the unit's
    `BEGIN IMMEDIATE` serialises writers, so no check outside a transaction can race it."""
    busy = await busy_root(tx, thread_id)
    if busy is not None:
        raise ThreadBusy(
            f"thread {thread_id} is running root {busy}; wait for it, "
            f"or `alp thread reconcile {thread_id}` if it died",
            threadId=thread_id,
            busyRoot=busy,
        )


class Owned(Protocol):
    """A thread as far as its owner goes."""

    @property
    def id(self) -> str: ...

    @property
    def owner_uid(self) -> int: ...


def check_owner(thread: Owned, caller: Caller) -> None:
    if thread.owner_uid != caller.uid:
        raise PermissionDenied(f"thread {thread.id} belongs to another user", threadId=thread.id)


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
        repository = await anyio.to_thread.run_sync(repository_of, workspace)

        async def unit(tx: Tx) -> Thread:
            await insert_thread(
                tx,
                thread_id,
                owner_uid=caller.uid,
                title=title,
                workspace=workspace,
                at=at,
                repository=repository,
            )
            await insert_genesis(tx, thread_id, at)
            return await load_thread(tx, thread_id)

        thread = await self.d.store.write(unit)
        self.publish(thread, "created")
        return thread

    async def list(self, caller: Caller, params: ThreadListParams) -> ThreadListResult:
        """Open threads of the caller's workspace by default; `statuses` widens or narrows,
        `all` takes every workspace and (unless narrowed) every status."""
        workspace = None
        if not params.all:
            workspace = params.workspace or workspace_of(params.cwd or "/")
        statuses = params.statuses
        if statuses is None and params.status is not None:
            statuses = [params.status]
        if statuses is None and not params.all:
            statuses = ["open"]
        threads = await list_threads(
            self.d.store,
            caller.uid,
            workspace=workspace,
            statuses=statuses,
            limit=max(1, min(params.limit, 10_000)),
        )
        return ThreadListResult(threads=threads)

    async def get(self, caller: Caller, thread_id: str) -> Thread:
        thread = await find_thread(self.d.store, thread_id)
        check_owner(thread, caller)
        return thread

    async def close(self, caller: Caller, ref: ThreadRef) -> Thread:
        """Close for good (no reopen); refused while a root still runs. Its schedules stop in
        the same transaction, with the reason: nothing can run in a closed thread any more,
        so a schedule must not wait for its next fire to find that out."""

        def check(thread: Thread) -> None:
            if thread.status != "open":
                raise ThreadClosed(
                    f"thread {ref.thread_id} is already {thread.status}", threadId=ref.thread_id
                )

        stopped: list[str] = []

        async def stop_schedules(tx: Tx, at: str) -> None:
            stopped[:] = await stop_thread_schedules(
                tx, ref.thread_id, f"thread {ref.thread_id} was closed", at
            )

        thread = await self._move(caller, ref, "closed", check, also=stop_schedules)
        if stopped:
            for listener in self.on_schedules_stopped:
                await listener(caller, stopped)
        return thread

    async def archive(self, caller: Caller, ref: ThreadRef) -> Thread:
        """Archive a closed thread (THREAD_NOT_CLOSED otherwise)."""

        def check(thread: Thread) -> None:
            if thread.status != "closed":
                raise ThreadNotClosed(
                    f"thread {ref.thread_id} is {thread.status}; "
                    "close it first (`alp thread close`)",
                    threadId=ref.thread_id,
                    status=thread.status,
                )

        return await self._move(caller, ref, "archived", check)

    async def _move(
        self,
        caller: Caller,
        ref: ThreadRef,
        status: str,
        check: Callable[[Thread], None],
        also: Callable[[Tx, str], Awaitable[None]] | None = None,
    ) -> Thread:
        at = self.d.clock.now_iso()

        async def unit(tx: Tx) -> Thread:
            thread = await load_thread(tx, ref.thread_id)
            check_owner(thread, caller)
            check(thread)
            await bump_revision(
                tx,
                ref.thread_id,
                status,
                at,
                if_revision=ref.if_revision,
                sets={"status": status, f"{status}_at": at},
            )
            await refuse_if_busy(tx, ref.thread_id)
            if also is not None:
                await also(tx, at)
            return await load_thread(tx, ref.thread_id)

        thread = await self.d.store.write(unit)
        self.publish(thread, status)
        return thread
