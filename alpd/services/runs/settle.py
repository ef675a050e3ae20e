"""The transaction that settles an execution (`execution/settle`, a headless run's exit).

In one store unit: the execution is the caller's (none: alpd's own supervisor), a named
thread must be its root's (THREAD_EXECUTION_BINDING_MISMATCH), and it must not have settled
(EXECUTION_SETTLED); its outcome, exit code, summary and output tail are recorded. A
sub-agent hands its pins to its root; a root settling takes the pins of its children still
running (a child that outlives its root pins nothing more: EXECUTION_ROOT_SETTLED).
A root's checkpoint is projected into context revision
n+1 of its thread (`alpd.domain.threads.projector`), with a compaction record when the projection
compacted, and the thread's revision is bumped — so a crash leaves the thread at revision n
or n+1, never between. A context that fails its chain check is not built on: the run is
still recorded as settled, and the thread stays where it is.
"""

from __future__ import annotations

import structlog

from alpd.domain.threads.context import Outcome as DomainOutcome
from alpd.domain.threads.projector import project_context
from alpd.errors import ExecutionSettled, ThreadContextTampered, ThreadExecutionBindingMismatch
from alpd.services.context import Caller
from alpd.services.runs.hosts import check_host_right
from alpd.services.runs.rows import check_execution_owner, execution_from_record, load_execution
from alpd.services.threads.pins import hand_pins_to_root
from alpd.services.threads.snapshots import load_checkpoint, load_snapshot
from alpd.store.db import Tx, Unit
from alpd.store.runs import execution_in, record_settled, unsettled_below
from alpd.store.threads.shell import bump_revision, load_thread
from alpd.store.threads.snapshots import insert_compaction, insert_snapshot
from protocol import messages as m

log = structlog.get_logger("alpd.executions")

#: the settled execution, and its thread when a root's settle moved it
Settled = tuple[m.Execution, m.Thread | None]


def settle_execution(
    caller: Caller | None,
    params: m.SettleParams,
    output_tail: str | None,
    at: str,
    *,
    host: str | None = None,
) -> Unit[Settled]:
    """The store unit settling `params.execution_id` (module docstring) on host `host`;
    `params` and `output_tail` come secret-filtered."""

    async def unit(tx: Tx) -> Settled:
        record = await load_execution(tx, params.execution_id)
        if caller is not None:
            check_execution_owner(record, caller)
        if host is not None:
            await check_host_right(tx, record, host)
        if params.thread_id is not None and (
            record.thread_id != params.thread_id or not record.is_root
        ):
            raise ThreadExecutionBindingMismatch(
                f"execution {params.execution_id} is not a root of thread {params.thread_id}",
                threadId=params.thread_id,
                executionId=params.execution_id,
            )
        if record.status == "settled":
            raise ExecutionSettled(
                f"execution {params.execution_id} already settled {record.outcome}",
                outcome=record.outcome,
            )
        await record_settled(
            tx,
            params.execution_id,
            outcome=params.outcome,
            exit_code=params.exit_code,
            summary=params.summary,
            output_tail=output_tail,
            at=at,
            settled_by=host,
        )
        thread = None
        if not record.is_root:
            root = await execution_in(tx, record.root_id)
            if root is not None and root.status != "settled":
                await hand_pins_to_root(tx, params.execution_id, record.root_id, at)
            # else: what it pinned while the root ran went with the root's settle; what it
            # pinned since was refused (EXECUTION_ROOT_SETTLED)
        if record.is_root:
            # Children still running hand over what they pinned so far: the root's settle is
            # the last projection their pins can reach (a later pin is refused by name).
            for child_id in await unsettled_below(tx, params.execution_id):
                await hand_pins_to_root(tx, child_id, params.execution_id, at)
        if record.is_root and record.thread_id is not None:
            try:
                thread = await _project(tx, record.thread_id, params, at)
            except ThreadContextTampered as exc:
                # The run did end: record that. Nothing is built on a forged context;
                # the thread stays where it is and every read of it says TAMPERED.
                log.error("projection_refused", execution=params.execution_id, **exc.data)
        return execution_from_record(await load_execution(tx, params.execution_id)), thread

    return unit


async def _project(tx: Tx, thread_id: str, params: m.SettleParams, at: str) -> m.Thread:
    thread_row = await load_thread(tx, thread_id)
    snapshot, _ = await load_snapshot(tx, thread_id, thread_row.context_revision)
    checkpoint = await load_checkpoint(tx, params.execution_id)
    outcome = DomainOutcome(
        execution_id=params.execution_id,
        status=params.outcome,
        summary=params.summary,
        exit_code=params.exit_code,
        at=at,
    )
    projection = project_context(snapshot, checkpoint, outcome)
    await insert_snapshot(tx, projection.snapshot, at)
    if projection.compaction is not None:
        await insert_compaction(tx, thread_id, projection.compaction, at)
    await bump_revision(
        tx,
        thread_id,
        "settled",
        at,
        detail=params.execution_id,
        sets={"context_revision": projection.snapshot.revision},
    )
    return await load_thread(tx, thread_id)


__all__ = ["Settled", "settle_execution"]
