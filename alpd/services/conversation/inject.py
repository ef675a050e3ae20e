"""Inject: a live run takes what waits for it, through its runtime's hook.

The hook (`alp hook deliver`, which alp installs in every Claude Code run) asks
`delivery/pending` after each tool call and when a prompt is submitted; the caller's
execution is found by process ancestry, exactly as for a pin, so a run takes only what waits
for itself and another uid's process finds no run at all (`PIN_OUTSIDE_EXECUTION`).

Exactly once, by lease and acknowledgement (the rules are pure:
`alpd.domain.conversation.delivery`):

1. **hand-out** (`hand_out`): in one transaction, the deliveries waiting for the run — a
   sub-agent's result targets its parent, any other delivery the thread's root — that hold
   no live lease are leased to the run for `LEASE_SECONDS`, as many as fit in what Claude
   Code shows whole (`inject_batch`; a larger one waits for the round). Concurrent hooks of
   one run (a model calling tools in parallel) never get the same delivery: the second finds
   it leased.
2. **acknowledge** (`acknowledge`): the hook prints the text for its runtime, then
   acknowledges. Only then is a delivery recorded `injected` (how `inject`, when, by which
   execution), in a statement that matches it only while it is still queued and leased to
   that run: recorded once, whatever is retried.
3. **reached the model, or given back**: each `delivery/pending` of the run is noted
   (`asked_at`). A run that settles other than `completed` with no hook call after an
   acknowledgement never had its model work on what it acknowledged — a Claude run whose
   prompt hook took a delivery and then failed at login — so those deliveries go back to
   the queue at its settle (`requeue_unconfirmed`, with a note) and the next round carries
   them: "taken mid-run" is only kept where the model had it.
4. **don't interrupt** (`hold`, `delivery/hold`, `alp hold`): a run may say it must not be
   interrupted; until it settles or says `hold: false`, new deliveries for it are routed to
   the next round and its hook is handed nothing.
5. **a crash in between loses nothing**: a hand-out never acknowledged (the hook killed, alpd
   killed before it answered) is free again when its lease runs out — the run's next hook
   call takes it, or, once the run has settled, the thread's next round delivers it, with the
   lease left on the row as the record of the failed attempt.

The price is at-least-once towards the model in one narrow case: a hook that printed the text
but whose acknowledgement never arrived. Losing a delivery silently was judged worse than
showing it twice, and that case leaves its trace (a lease on a delivery some round took).
"""

from __future__ import annotations

from alpd.clock import iso
from alpd.domain.conversation.delivery import inject_batch, inject_context, lease_expiry
from alpd.services.context import Caller, Daemon
from alpd.services.runs.callers import execution_of_caller
from alpd.store.conversation.delivery import (
    Run,
    leasable,
    lease,
    mark_injected,
    note_asked,
    queued_count,
    run_held,
    set_hold,
)
from alpd.store.db import Tx
from protocol import messages as m

#: at most this many deliveries leave in one hand-out (the rest at the next hook call)
HAND_OUT_MAX = 100


async def hand_out(d: Daemon, caller: Caller, params: m.PendingParams) -> m.PendingResult:
    """`delivery/pending`: what waits for the caller's run, leased to it unless `peek`."""
    execution = await execution_of_caller(d.store, caller)
    if execution.thread_id is None:
        return m.PendingResult(deliveries=[])
    run = Run(
        execution_id=execution.id,
        thread_id=execution.thread_id,
        is_root=execution.is_root,
        owner_uid=execution.owner_uid,
    )
    now = d.clock.now()
    at, until = iso(now), iso(lease_expiry(now))

    async def unit(tx: Tx) -> list[m.PendingDelivery]:
        if not params.peek:
            await note_asked(tx, run.execution_id, at)
        if await run_held(tx, run.execution_id):
            return []  # it said don't interrupt: the next round carries what waits
        found = await leasable(tx, run, at, HAND_OUT_MAX)
        taken = [found[i] for i in inject_batch([(p.envelope, p.text) for p in found])]
        if taken and not params.peek:
            await lease(tx, [p.id for p in taken], run.execution_id, until)
        return taken

    deliveries = await d.store.write(unit)
    if not deliveries:
        return m.PendingResult(deliveries=[])
    return m.PendingResult(
        deliveries=deliveries,
        context=inject_context([(p.envelope, p.text) for p in deliveries]),
        lease_until=None if params.peek else until,
    )


async def acknowledge(d: Daemon, caller: Caller, params: m.AckParams) -> tuple[m.AckResult, str]:
    """`delivery/ack`: the caller's runtime has the text; record each delivery injected.
    Also the caller's execution, for whoever records where deliveries landed."""
    execution_id = (await execution_of_caller(d.store, caller)).id
    wanted = sorted(set(params.ids))
    if not wanted:
        return m.AckResult(acked=[], missed=[]), execution_id
    at = d.clock.now_iso()

    async def unit(tx: Tx) -> list[int]:
        return await mark_injected(tx, wanted, execution_id, at)

    acked = await d.store.write(unit)
    result = m.AckResult(acked=acked, missed=[i for i in wanted if i not in set(acked)])
    return result, execution_id


async def hold(d: Daemon, caller: Caller, params: m.HoldParams) -> m.HoldResult:
    """`delivery/hold`: the caller's run says don't interrupt (or, `hold` false, take
    deliveries mid-run again). Held, new deliveries for it are routed to the next round and
    its hook is handed nothing; what waits when it settles leaves in that round."""
    execution = await execution_of_caller(d.store, caller)
    at = d.clock.now_iso()

    async def unit(tx: Tx) -> int:
        await set_hold(tx, execution.id, at if params.hold else None)
        return await queued_count(tx, execution.thread_id) if execution.thread_id else 0

    waiting = await d.store.write(unit)
    return m.HoldResult(execution_id=execution.id, held=params.hold, waiting=waiting)


__all__ = ["HAND_OUT_MAX", "acknowledge", "hand_out", "hold"]
