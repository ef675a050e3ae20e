"""Delivery: how pushes, scheduled fires and sub-agent results reach their thread.

One mechanism for every kind of delivery (handoffs will use it too), three paths chosen by
the target's state:

- **wake**: the thread is idle → a headless root (kind `push`, `scheduled` …) opens at once,
  its prompt the delivered text under its envelope line (`alpd.domain.conversation.delivery`);
- **queue**: a root is running → the delivery waits; when that root settles, everything
  waiting leaves as ONE fresh round (`next_round`), not one root per delivery;
- **inject**: a root is running and its runtime takes text mid-work (Claude Code, through
  the hook alp installs with the run) → the delivery waits for that run's hook, which asks
  `delivery/pending` and acknowledges (`alpd.services.conversation.inject`: lease, then ack); if
  the run ends before its hook takes it, the next round delivers it like a queued one.

The path chosen is recorded on the delivery (`route`), and the one that delivered it (`how`:
`inject`, `queue` — a round after a running root — or `wake`), with `note` saying why when it
fell back.

Durable and exactly once: `submit` writes the delivery (`queued`) before anything else (one
transaction, `alpd.services.conversation.submit`: owner, coalescing, the queue bound, the route),
and a round marks its deliveries `delivered` in the same transaction that reserves its root —
after a kill -9 a delivery is either still queued (and the next drain takes it) or belongs
to exactly one root. A root reserved for a round but never started (alpd killed between the
reservation and the spawn) is settled `interrupted` at the next start; its deliveries go back
to the queue (`requeue_unstarted`), so the following round carries them.

Drains of one thread never overlap (a lock per thread; one alpd per home). They run after
each submit, after each settle of a root (`after_settle` → `wake`), at start,
and every `SWEEP_SECONDS` as a safety net (`run`).

Same owner on every path: a delivery records the uid it is made for (`sender_uid`: whoever
sent it; by default the thread's owner). Submit refuses a thread of another owner
(PERMISSION_DENIED); a round (wake, queue) marks such a delivery `failed` instead of
delivering it, and `delivery/pending` (inject) never hands it out — so a thread that changed
hands after a send never receives it.

Whoever needs to know where deliveries ended (handoffs record it on both threads) registers
in `on_landed`: called with the ids, `delivered` / `injected` / `failed`, and the execution.
A round that can never open (its agent's runtime refuses to start: an untrusted Codex
approval hook, a program gone …) is told to `on_round_failed` (the chat doors tell the person
who typed it, or send a `failures` notice): it is no root, so no settle would say so.

Bounds: a text is at most `TEXT_MAX_BYTES` (INVALID_ARGUMENT), a thread holds at most
`QUEUE_MAX` waiting deliveries (QUEUE_FULL). Texts are stored secret-filtered.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final, Literal

import anyio
import msgspec
import structlog

from alpd.domain.conversation.delivery import (
    TEXT_MAX_BYTES,
    Queued,
    envelope_line,
    next_round,
    round_prompt,
    wake_section,
)
from alpd.domain.runs.policy import Origin
from alpd.domain.secrets.filter import redact
from alpd.errors import (
    AlpError,
    InvalidArgument,
    ThreadBusy,
)
from alpd.services.context import Caller
from alpd.services.conversation.inject import acknowledge, hand_out, hold
from alpd.services.conversation.submit import QUEUE_MAX, StoredUnit, Submission, store_delivery
from alpd.services.conversation.wake import (
    agent_for_thread,
    open_background_root,
    prepare_background_root,
)
from alpd.services.runs.executions import Executions
from alpd.store.conversation.delivery import (
    claim_round,
    delivery_state,
    fail_queued,
    queued_for_round,
    requeue_unconfirmed,
    requeue_unstarted,
    root_running,
    root_thread,
    threads_with_queued,
    waiting_count,
)
from alpd.store.db import Tx
from protocol import messages as m

SWEEP_SECONDS: Final = 30.0

log = structlog.get_logger("alpd.delivery")

_origin = msgspec.json.Decoder(Origin)

Landing = Literal["delivered", "injected", "failed"]
#: told where deliveries ended: (their ids, how, the execution that took them)
Landed = Callable[[list[int], Landing, str | None], Awaitable[None]]
#: told of a round that could not open: (thread id, its origin, its kind, why)
RoundFailed = Callable[[str, Origin, str, str], Awaitable[None]]

#: why a round refuses a delivery made for another uid than the thread's owner
OTHER_OWNER: Final = "refused: the thread belongs to another user than the one who sent this"


@dataclass(frozen=True, slots=True)
class Submitted:
    delivery_id: int
    status: Literal["started", "injecting", "queued", "coalesced"]
    #: deliveries of the thread still waiting after this submit
    waiting: int
    #: the root that carries it, when it started at once
    execution: m.Execution | None = None


@dataclass(frozen=True, slots=True)
class PushGuard:
    """What the loop guards make of a push sent from a run: who sent it (`execution:ID`) and
    the writes that admit it (or refuse it) in the unit that stores it."""

    by: str
    in_unit: StoredUnit


#: the loop guards of pushes (`HandoffService.push_guard`): given the caller and the target
#: thread, None for a caller that is no run
PushGuards = Callable[[Caller, str], Awaitable[PushGuard | None]]


class _RoundChanged(Exception):
    """A round's deliveries were taken by someone else between read and claim."""


class DeliveryService:
    def __init__(self, ex: Executions) -> None:
        self.ex = ex
        self.d = ex.d
        self._locks: dict[str, anyio.Lock] = {}
        self._wanted: set[str] = set()
        self._wakeup = anyio.Event()
        #: passes of `run` started and done, and a forced sweep asked (`sweep_now`)
        self._passes_started = 0
        self._passes_done = 0
        self._pass_done = anyio.Event()
        self._sweep_asked = False
        self.on_landed: list[Landed] = []
        self.on_round_failed: list[RoundFailed] = []
        #: set by the handoff service: pushes from runs obey its loop guards
        self.push_guard: PushGuards | None = None

    async def _landed(self, ids: list[int], how: Landing, execution_id: str | None) -> None:
        for listener in self.on_landed:
            try:
                await listener(ids, how, execution_id)
            except Exception:
                log.exception("landed_listener_failed", deliveries=ids, how=how)

    # submit

    async def submit(
        self, sub: Submission, *, requested_by: Caller | None = None, check_runnable: bool = True
    ) -> Submitted:
        """Store the delivery, then deliver what the thread's state allows (wake or queue).

        With `check_runnable`, refuses before storing anything when the run it asks for could
        never start; without (a sub-agent's result, which a live parent may still take), such
        a delivery is stored and, if no run takes it, marked failed with the reason."""
        text = redact(sub.text).text
        if len(text.encode()) > TEXT_MAX_BYTES:
            raise InvalidArgument(
                f"the text is {len(text.encode())} bytes; at most {TEXT_MAX_BYTES} are "
                "delivered (put the rest in a file and send its path)",
                limit=TEXT_MAX_BYTES,
            )
        agent = await agent_for_thread(self.ex, sub.thread_id, sub.agent)
        envelope = envelope_line(sub.source)
        if check_runnable:
            # Missing agent or program, a command with no arguments, over budget: say so now.
            await prepare_background_root(
                self.ex,
                sub.thread_id,
                kind=sub.kind,
                origin=sub.origin,
                prompt=round_prompt([Queued(0, sub.kind, agent, envelope, text)]),
                agent=agent,
                requested_by=requested_by,
            )
        at = self.d.clock.now_iso()
        delivery_id, route = await self.d.store.write(
            store_delivery(sub, agent, envelope, text, at)
        )
        execution = await self.drain(sub.thread_id)
        state = await delivery_state(self.d.store, delivery_id)
        waiting = await self.waiting(sub.thread_id)
        if execution is not None and state is not None and state.execution_id == execution.id:
            return Submitted(delivery_id, "started", waiting, execution)
        if route is None:
            return Submitted(delivery_id, "coalesced", waiting)
        return Submitted(delivery_id, "injecting" if route == "inject" else "queued", waiting)

    async def waiting(self, thread_id: str) -> int:
        return await waiting_count(self.d.store, thread_id)

    # drain

    async def drain(self, thread_id: str) -> m.Execution | None:
        """If the thread is idle and deliveries wait, open one root for the next round."""
        lock = self._locks.setdefault(thread_id, anyio.Lock())
        try:
            async with lock:
                for _ in range(3):
                    try:
                        return await self._open_next_round(thread_id)
                    except _RoundChanged:
                        continue
                return None
        finally:
            if not lock.locked() and not lock.statistics().tasks_waiting:
                self._locks.pop(thread_id, None)

    async def _open_next_round(self, thread_id: str) -> m.Execution | None:
        if await root_running(self.d.store, thread_id):
            # Its settle (or reconcile's, if it died) wakes the drain again: no need to try
            # opening a root only to be told THREAD_BUSY.
            return None
        rows = await queued_for_round(self.d.store, thread_id, QUEUE_MAX)
        foreign = [r.queued.id for r in rows if not r.same_owner]
        if foreign:
            await self._fail(foreign, OTHER_OWNER)
            log.warning("deliveries_refused", thread=thread_id, deliveries=foreign)
            rows = [r for r in rows if r.same_owner]
        taken = next_round([r.queued for r in rows])
        if not taken:
            return None
        origin = _origin.decode(rows[0].origin)
        ids = [item.id for item in taken]
        at = self.d.clock.now_iso()

        async def claim(tx: Tx, execution_id: str) -> None:
            if await claim_round(tx, ids, execution_id, at) != len(ids):
                raise _RoundChanged

        try:
            result = await open_background_root(
                self.ex,
                thread_id,
                kind=taken[0].kind,
                origin=origin,
                prompt=round_prompt(taken),
                agent=taken[0].agent,
                addendum=wake_section(taken, origin),
                in_unit=claim,
            )
        except ThreadBusy:
            return None  # its settle wakes us again
        except AlpError as exc:
            # It can never run as asked (thread closed, agent gone from the config …): say
            # so on the deliveries instead of retrying them forever.
            await self._fail(ids, exc.message)
            log.warning("round_failed", thread=thread_id, error=exc.name, deliveries=len(ids))
            for listener in self.on_round_failed:
                try:
                    await listener(thread_id, origin, taken[0].kind, exc.message)
                except Exception:
                    log.exception("round_failed_listener_failed", thread=thread_id)
            return None
        log.info("round_opened", thread=thread_id, execution=result.execution.id, deliveries=ids)
        await self._landed(ids, "delivered", result.execution.id)
        return result.execution

    async def _fail(self, ids: list[int], reason: str) -> None:
        async def unit(tx: Tx) -> None:
            await fail_queued(tx, ids, reason)

        await self.d.store.write(unit)
        await self._landed(ids, "failed", None)

    # waking the drain loop

    def wake(self, thread_id: str) -> None:
        """Ask the background loop to drain this thread (never waits)."""
        self._wanted.add(thread_id)
        self._wakeup.set()

    async def after_settle(self, execution_id: str) -> None:
        await self.requeue_unconfirmed(execution_id)
        thread_id = await root_thread(self.d.store, execution_id)
        if thread_id is not None:
            await self.requeue_unstarted(execution_id)
            self.wake(thread_id)

    async def sweep_now(self) -> None:
        """Run a sweep now (every thread with waiting deliveries, as every `SWEEP_SECONDS`)
        and return once a pass that started after this call is done (`daemon/sweep`)."""
        target = self._passes_started + 1
        self._sweep_asked = True
        self._wakeup.set()
        while self._passes_done < target:
            await self._pass_done.wait()

    async def requeue_unconfirmed(self, execution_id: str) -> int:
        """Injections the settled run's model never worked on go back to the queue
        (`alpd.services.conversation.inject`, rule 3); how many."""

        async def unit(tx: Tx) -> int:
            return await requeue_unconfirmed(tx, execution_id)

        requeued = await self.d.store.write(unit)
        if requeued:
            log.warning("injection_requeued", execution=execution_id, deliveries=requeued)
        return requeued

    async def requeue_unstarted(self, execution_id: str | None = None) -> int:
        """Deliveries of rounds whose root was reserved but never started go back to the
        queue (`alpd.store.conversation.delivery.requeue_unstarted`): of that root, or of all
        such roots (the sweep); how many."""

        async def unit(tx: Tx) -> int:
            return await requeue_unstarted(tx, execution_id)

        requeued = await self.d.store.write(unit)
        if requeued:
            log.warning("round_requeued", execution=execution_id, deliveries=requeued)
        return requeued

    async def run(self, report: Callable[[m.TaskState], None]) -> None:
        """The drain loop: every thread with waiting deliveries at start and every
        `SWEEP_SECONDS`, and each thread `wake` names as soon as it is named."""
        sweep = True
        while True:
            self._passes_started += 1
            sweep, self._sweep_asked = sweep or self._sweep_asked, False
            if sweep:
                await self.requeue_unstarted()
                self._wanted.update(await threads_with_queued(self.d.store))
            wanted, self._wanted = self._wanted, set()
            opened = 0
            try:
                for thread_id in sorted(wanted):
                    opened += await self.drain(thread_id) is not None
                report(
                    m.TaskState(
                        name="delivery",
                        state="idle",
                        last_run_at=self.d.clock.now_iso(),
                        detail=f"opened {opened} round(s)" if opened else None,
                    )
                )
            except Exception as exc:
                log.exception("drain_failed")
                self._wanted |= wanted
                report(m.TaskState(name="delivery", state="failing", detail=type(exc).__name__))
            self._passes_done += 1
            self._pass_done.set()
            self._pass_done = anyio.Event()
            sweep = True
            with anyio.move_on_after(SWEEP_SECONDS):
                await self._wakeup.wait()
                sweep = False
            self._wakeup = anyio.Event()

    # inject (alpd.services.conversation.inject)

    async def pending(self, caller: Caller, params: m.PendingParams) -> m.PendingResult:
        return await hand_out(self.d, caller, params)

    async def hold(self, caller: Caller, params: m.HoldParams) -> m.HoldResult:
        return await hold(self.d, caller, params)

    async def ack(self, caller: Caller, params: m.AckParams) -> m.AckResult:
        result, execution_id = await acknowledge(self.d, caller, params)
        if result.acked:
            await self._landed(result.acked, "injected", execution_id)
        return result


__all__ = [
    "QUEUE_MAX",
    "SWEEP_SECONDS",
    "DeliveryService",
    "Landed",
    "Landing",
    "PushGuard",
    "PushGuards",
    "RoundFailed",
    "Submission",
    "Submitted",
]
