"""Read-side use cases: `thread/show` (reconciled first) and `thread/context`."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Generic, TypeVar

import anyio
import msgspec
from anyio.abc import TaskGroup

from alpd.domain.threads.context import CompactionRecord, Snapshot
from alpd.errors import InvalidArgument
from alpd.services.context import Caller
from alpd.services.history.summary import history_level, thread_history
from alpd.services.runs.executions import Executions
from alpd.services.runs.rows import execution_from_record
from alpd.services.threads.lifecycle import check_owner
from alpd.services.threads.snapshots import load_chain, load_compactions, load_snapshot
from alpd.services.threads.steering import thread_steps
from alpd.store.conversation.handoffs import thread_handoffs
from alpd.store.conversation.reports import recent_reports
from alpd.store.db import Tx
from alpd.store.threads.shell import load_thread
from alpd.store.threads.snapshots import executions_of_thread
from protocol import messages as m

__all__ = ["context", "history_level", "show"]

T = TypeVar("T")


def _context_result(
    snapshot: Snapshot, digest: str, compactions: list[CompactionRecord]
) -> m.ContextResult:
    return m.ContextResult(
        thread_id=snapshot.thread_id,
        revision=snapshot.revision,
        digest=digest,
        snapshot=msgspec.to_builtins(snapshot),
        compactions=[msgspec.to_builtins(record) for record in compactions],
    )


async def context(ex: Executions, caller: Caller, params: m.ContextParams) -> m.ContextResult:
    async def unit(tx: Tx) -> m.ContextResult:
        thread = await load_thread(tx, params.thread_id)
        check_owner(thread, caller)
        head = thread.context_revision
        revision = head if params.revision is None else params.revision
        if not 0 <= revision <= head:
            raise InvalidArgument(
                f"thread {params.thread_id} has context revisions 0..{head}",
                revision=revision,
            )
        await load_chain(tx, params.thread_id, head)
        snapshot, digest = await load_snapshot(tx, params.thread_id, revision)
        compactions = await load_compactions(tx, params.thread_id, revision)
        return _context_result(snapshot, digest, compactions)

    return await ex.d.store.read_unit(unit)


async def show(ex: Executions, caller: Caller, params: m.ThreadShowParams) -> m.ThreadShowResult:
    await ex.threads.get(caller, params.thread_id)
    await ex.reconcile_thread(caller, params.thread_id)
    store, thread_id = ex.d.store, params.thread_id
    # The view's reads at once: on PostgreSQL each is a round trip on a pooled connection of
    # its own, and their waits overlap (SQLite's reader takes them one after the other).
    try:
        async with anyio.create_task_group() as tg:
            records = _started(tg, executions_of_thread(store, thread_id))
            ctx = _started(tg, context(ex, caller, m.ContextParams(thread_id=thread_id)))
            thread = _started(tg, ex.threads.get(caller, thread_id))
            summary = _started(tg, thread_history(store, thread_id))
            reports = _started(tg, recent_reports(store, thread_id))
            handoffs_in = _started(tg, thread_handoffs(store, thread_id, "in"))
            handoffs_out = _started(tg, thread_handoffs(store, thread_id, "out"))
            steps = _started(tg, thread_steps(ex, thread_id))
    except BaseExceptionGroup as group:
        # a read's own error (THREAD_CONTEXT_TAMPERED, …), as the reads in turn raised it
        raise _first_error(group) from None
    roots = [execution_from_record(r) for r in records.value if r.is_root]
    # a recap's refresh is a `temp` execution of the thread, not a root's delegated child
    children = sum(1 for r in records.value if not r.is_root and r.kind != "temp")
    temp = sum(1 for r in records.value if r.kind == "temp")
    busy = next((r.id for r in roots if r.status != "settled"), None)
    return m.ThreadShowResult(
        thread=msgspec.structs.replace(thread.value, busy_root=busy, root_count=len(roots)),
        roots=roots,
        context=ctx.value,
        history=summary.value,
        children=children,
        temp=temp,
        reports=reports.value,
        handoffs_in=handoffs_in.value,
        handoffs_out=handoffs_out.value,
        steps=steps.value,
    )


def _first_error(group: BaseExceptionGroup[BaseException]) -> BaseException:
    first = group.exceptions[0]
    return _first_error(first) if isinstance(first, BaseExceptionGroup) else first


class _Later(Generic[T]):
    """The result of an awaitable started in a task group, there once the group has ended."""

    value: T


def _started(tg: TaskGroup, awaitable: Awaitable[T]) -> _Later[T]:
    later: _Later[T] = _Later()

    async def run() -> None:
        later.value = await awaitable

    tg.start_soon(run)
    return later
