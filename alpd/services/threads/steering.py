"""`thread/clear` and `thread/undo`: a person steers the thread's context; the record stays.

Each is one store unit under the thread's lease, like `continue`: the thread is reconciled
first (a dead root is settled, and its pins projected, before anyone builds on the head),
then, in one `BEGIN IMMEDIATE … COMMIT`:

1. the thread's revision moves by one, guarded by `ifRevision` (a stale read is
   THREAD_REVISION_CONFLICT — checked first, as for continue);
2. a running root refuses the step (THREAD_BUSY): its settle will project onto the head;
3. the whole chain is verified from genesis, with every root and every earlier step;
4. the new snapshot (rules: `alpd.domain.threads.steering`) is inserted as revision n+1, chained to
   the head, and the step is recorded beside it (`context_steps`: who, when, which revision
   it replaced, and for an undo the root and the revision restored).

Nothing is deleted or edited: older snapshots, the undone root and its history stay as they
were; history entries are labelled through the step (`alpd.services.history.labels`).
After the step is published (`thread/changed`), the `after_step` hooks are told (the recap:
`alpd.services.recap.refresh`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal

import structlog

from alpd.domain.threads.context import Snapshot
from alpd.domain.threads.steering import (
    Step,
    cleared_snapshot,
    restored_snapshot,
    root_to_undo,
)
from alpd.errors import ThreadClosed
from alpd.services.context import Caller
from alpd.services.runs.executions import Executions
from alpd.services.threads.lifecycle import check_owner, refuse_if_busy
from alpd.services.threads.snapshots import load_chain, load_snapshot
from alpd.store.db import Tx
from alpd.store.threads.shell import bump_revision, load_thread
from alpd.store.threads.snapshots import insert_snapshot, root_marks
from alpd.store.threads.steps import StepRecord, insert_step, load_steps, steps_of_thread
from protocol import messages as m

__all__ = ["clear", "step_to_wire", "thread_steps", "undo"]

log = structlog.get_logger("alpd.steering")

StepChange = Literal["cleared", "undone"]
#: the step to write, given the verified head (inside the unit)
_Build = Callable[[Tx, Snapshot, str], Awaitable[Step]]


def step_to_wire(record: StepRecord) -> m.ContextStep:
    step = record.step
    return m.ContextStep(
        kind=step.kind,
        revision=step.revision,
        replaced_revision=step.revision - 1,
        by=record.by,
        door=record.door,
        at=record.at,
        restored_revision=step.restored_revision,
        execution_id=step.execution_id,
    )


async def thread_steps(ex: Executions, thread_id: str) -> list[m.ContextStep]:
    """Every clear and undo of the thread, oldest first (for `thread/show`)."""
    return [step_to_wire(record) for record in await steps_of_thread(ex.d.store, thread_id)]


async def clear(ex: Executions, caller: Caller, params: m.ThreadStepParams) -> m.ThreadStepResult:
    """Revision n+1 with an empty working context."""

    async def build(tx: Tx, head: Snapshot, digest: str) -> Step:
        return Step(kind="clear", revision=head.revision + 1)

    return await _step(ex, caller, params, "cleared", build)


async def undo(ex: Executions, caller: Caller, params: m.ThreadStepParams) -> m.ThreadStepResult:
    """Revision n+1 holding what the last undoable root opened on."""

    async def build(tx: Tx, head: Snapshot, digest: str) -> Step:
        steps = [record.step for record in await load_steps(tx, params.thread_id)]
        # The bindings were verified by `load_chain` in this same unit (columns = policy).
        root = root_to_undo(await root_marks(tx, params.thread_id), steps, params.thread_id)
        return Step(
            kind="undo",
            revision=head.revision + 1,
            execution_id=root.execution_id,
            restored_revision=root.opened_on,
        )

    return await _step(ex, caller, params, "undone", build)


async def _step(
    ex: Executions,
    caller: Caller,
    params: m.ThreadStepParams,
    change: StepChange,
    build: _Build,
) -> m.ThreadStepResult:
    thread_id = params.thread_id
    await ex.threads.get(caller, thread_id)
    await ex.reconcile_thread(caller, thread_id)
    at = ex.d.clock.now_iso()
    by = f"uid:{caller.uid}"

    async def unit(tx: Tx) -> m.ThreadStepResult:
        current = await load_thread(tx, thread_id)
        check_owner(current, caller)
        if current.status != "open":
            raise ThreadClosed(
                f"thread {thread_id} is {current.status}; its context no longer changes",
                threadId=thread_id,
            )
        head_revision = current.context_revision
        await bump_revision(
            tx,
            thread_id,
            change,
            at,
            if_revision=params.if_revision,
            detail=f"context revision {head_revision + 1}",
            sets={"context_revision": head_revision + 1},
        )
        await refuse_if_busy(tx, thread_id)
        head, digest = await load_chain(tx, thread_id, head_revision)
        step = await build(tx, head, digest)
        if step.restored_revision is None:
            written = cleared_snapshot(head, digest)
        else:
            opened_on, _ = await load_snapshot(tx, thread_id, step.restored_revision)
            written = restored_snapshot(head, digest, opened_on)
        new_digest = await insert_snapshot(tx, written, at)
        await insert_step(tx, thread_id, step, by=by, door=params.door, at=at)
        thread = await load_thread(tx, thread_id)
        record = StepRecord(step=step, by=by, door=params.door, at=at)
        return m.ThreadStepResult(thread=thread, step=step_to_wire(record), digest=new_digest)

    async with ex.leases.thread(thread_id):
        result = await ex.d.store.write(unit)
    ex.threads.publish(result.thread, change)
    for hook in ex.after_step:
        try:
            await hook(thread_id, result.step.revision)
        except Exception:
            log.exception("after_step_failed", thread=thread_id)
    return result
