"""Read-side use cases: `thread/show` (reconciled first) and `thread/context`."""

from __future__ import annotations

import msgspec

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

    return await ex.d.store.write(unit)


async def show(ex: Executions, caller: Caller, params: m.ThreadShowParams) -> m.ThreadShowResult:
    await ex.threads.get(caller, params.thread_id)
    await ex.reconcile_thread(caller, params.thread_id)
    records = await executions_of_thread(ex.d.store, params.thread_id)
    roots = [execution_from_record(r) for r in records if r.is_root]
    # a recap's refresh is a `temp` execution of the thread, not a root's delegated child
    children = sum(1 for r in records if not r.is_root and r.kind != "temp")
    temp = sum(1 for r in records if r.kind == "temp")
    ctx = await context(ex, caller, m.ContextParams(thread_id=params.thread_id))
    thread = await ex.threads.get(caller, params.thread_id)
    busy = next((r.id for r in roots if r.status != "settled"), None)
    thread = msgspec.structs.replace(thread, busy_root=busy, root_count=len(roots))
    summary = await thread_history(ex.d.store, params.thread_id)
    return m.ThreadShowResult(
        thread=thread,
        roots=roots,
        context=ctx,
        history=summary,
        children=children,
        temp=temp,
        reports=await recent_reports(ex.d.store, params.thread_id),
        handoffs_in=await thread_handoffs(ex.d.store, params.thread_id, "in"),
        handoffs_out=await thread_handoffs(ex.d.store, params.thread_id, "out"),
        steps=await thread_steps(ex, params.thread_id),
    )
