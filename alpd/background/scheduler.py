"""The scheduler: one task of the daemon's task group that fires due schedules.

It sleeps until the earliest `next_fire_at` of an active schedule — no polling — and is
woken early when a schedule changes (`poke`). Sleeps are capped at `MAX_SLEEP` so a wall
clock that jumps (suspend, NTP) is noticed within that time; an idle alpd wakes at most once
a minute for it.

A pass, for each active schedule whose next fire is due (`alpd.domain.schedules.plan.plan`
decides what runs; everything in (accounted_until, now] is dealt with by one pass):

1. In one transaction: the thread must still be open (else the schedule stops, with the
   reason recorded); `accounted_until` moves to now, `next_fire_at` to the next fire (none
   left: `done`), skipped fires are counted, and the fire to run is recorded as `firing_at`.
2. The fire is handed to the delivery queue (`DeliveryService.submit`) as a `scheduled`
   root whose origin carries `scheduleId`, `fireTime` and `missed`: an idle thread starts
   it now; a busy one queues it — once: a later fire of the same schedule joins the waiting
   one (coalescing key `schedule:ID`) and counts as missed. So one schedule never has two
   runs at once, and nothing stacks up behind a long run.
3. `firing_at` is cleared. After a crash between 1 and 3, the next pass delivers a recorded
   fire only if no delivery carries its origin yet: no fire is lost or doubled.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Final

import anyio
import structlog

from alpd.clock import iso
from alpd.domain.conversation.delivery import Source
from alpd.domain.runs.policy import Origin
from alpd.domain.schedules.plan import Fire, plan
from alpd.domain.secrets.filter import redact
from alpd.errors import AlpError
from alpd.services.context import Caller
from alpd.services.conversation.delivery import DeliveryService, Submission, Submitted
from alpd.services.conversation.wake import owner_caller
from alpd.services.schedules.service import (
    ScheduleService,
    check_live,
    coalesce_key,
    parse_time,
    rule_line,
    rule_of,
)
from alpd.store import schedule_due as due
from alpd.store import schedules as store
from alpd.store.db import Tx
from alpd.store.schedules import FireRecord, ScheduleRow
from protocol import messages as m

__all__ = ["MAX_SLEEP", "Scheduler"]

MAX_SLEEP: Final = 60.0

log = structlog.get_logger("alpd.scheduler")


class Scheduler:
    def __init__(self, schedules: ScheduleService, delivery: DeliveryService) -> None:
        self.schedules = schedules
        self.delivery = delivery
        self.d = schedules.d
        self._wakeup = anyio.Event()
        self.fired = 0
        #: passes of `run` started and done (`tick_now`)
        self._passes_started = 0
        self._passes_done = 0
        self._pass_done = anyio.Event()

    def poke(self) -> None:
        """A schedule changed: re-read when the next fire is."""
        self._wakeup.set()

    async def run(self, report: Callable[[m.TaskState], None]) -> None:
        while True:
            delay = MAX_SLEEP
            self._passes_started += 1
            try:
                delay = await self.tick(self.d.clock.now())
                report(self._state("idle"))
            except Exception as exc:
                log.exception("scheduler_failed")
                report(self._state("failing", f"{type(exc).__name__}: {exc}"))
            self._passes_done += 1
            self._pass_done.set()
            self._pass_done = anyio.Event()
            with anyio.move_on_after(min(max(delay, 0.0), MAX_SLEEP)):
                await self._wakeup.wait()
            self._wakeup = anyio.Event()

    async def tick_now(self) -> None:
        """Fire what is due now, and return once a pass that started after this call is done
        (`daemon/sweep`)."""
        target = self._passes_started + 1
        self.poke()
        while self._passes_done < target:
            await self._pass_done.wait()

    def _state(self, state: str, error: str | None = None) -> m.TaskState:
        return m.TaskState(
            name="scheduler",
            state=state,
            last_run_at=self.d.clock.now_iso(),
            detail=error or f"{self.fired} fire(s) since start",
        )

    async def tick(self, now: datetime) -> float:
        """Fire what is due at `now`; seconds until the next fire."""
        # Only this host's schedules (those of a host taken over move here: alpd.services.hosts)
        host = self.d.host_id
        for row in await due.firing_schedules(self.d.store, host):
            await self._recover(row)
        for row in await due.due_schedules(self.d.store, iso(now), host):
            await self._advance(row, now)
        following = await due.next_fire_at(self.d.store, host)
        if following is None:
            return MAX_SLEEP
        return (parse_time(following) - self.d.clock.now()).total_seconds()

    async def _advance(self, row: ScheduleRow, now: datetime) -> None:
        decided = plan(rule_of(row), parse_time(row.accounted_until), now, row.catch_up)
        at = iso(now)

        async def unit(tx: Tx) -> Fire | None:
            current = await store.fire_state(tx, row.id)
            if current is None or current.status != "active":
                return None  # deleted or paused meanwhile
            if current.accounted_until != row.accounted_until:
                return None  # another pass got here first
            if self.d.host_id is not None and current.host_id not in (None, self.d.host_id):
                return None  # taken over by another host since it was read
            if current.thread_status != "open":
                await store.stop_schedule(tx, row.id, f"thread {current.thread_id} was closed", at)
                return None
            run = decided.run
            claim = iso(run.fire_time) if run else None
            if claim is not None and not await store.claim_fire(
                tx, row.id, claim, host_id=self.d.host_id,
                accounted_until=current.accounted_until, at=at,
            ):  # fmt: skip
                return None  # the fire's row is another's: that host fires it
            following = decided.next_fire
            fire = FireRecord(
                at=at,
                next_fire=iso(following) if following else None,
                missed=decided.skipped + (run.missed if run else 0),
                fire_time=iso(run.fire_time) if run else None,
                fire_missed=run.missed if run else 0,
            )
            await store.record_fire(tx, row.id, fire)
            return run

        run = await self.d.store.write(unit)
        if run is not None:
            await self._deliver(row, iso(run.fire_time), run.missed)
        elif decided.skipped:
            log.info("fires_skipped", schedule=row.id, skipped=decided.skipped)

    async def _recover(self, row: ScheduleRow) -> None:
        """A fire recorded before a crash: deliver it unless a delivery carries it."""
        assert row.firing_at is not None
        if not await store.fire_delivered(self.d.store, row.thread_id, row.id, row.firing_at):
            await self._deliver(row, row.firing_at, row.firing_missed)
        else:
            await self._fired(row.id, row.firing_at, joined=False)

    async def run_by_hand(self, caller: Caller, params: m.ScheduleRef) -> m.ScheduleRunResult:
        """`schedule/run`: a fire out of turn, now; the plan is left as it was. What would
        stop a planned fire (a closed thread …) is the caller's error here."""
        row = await self.schedules.owned(caller, params.schedule_id)
        check_live(row)
        submitted = await self._submit(row, self.d.clock.now_iso(), 0)
        self.fired += 1
        schedule = await self.schedules.show(caller, params)
        self.schedules.publish(schedule, "fired")
        return m.ScheduleRunResult(
            schedule=schedule,
            status="started" if submitted.status == "started" else "queued",
            execution=submitted.execution,
        )

    async def _submit(self, row: ScheduleRow, fire_time: str, missed: int) -> Submitted:
        label = f"{rule_line(row)} ({row.id})"
        origin = Origin(
            door="scheduler",
            by=row.id,
            schedule_id=row.id,
            fire_time=fire_time,
            missed=missed or None,
            report_to=row.report_to,
        )
        return await self.delivery.submit(
            Submission(
                thread_id=row.thread_id,
                kind="scheduled",
                origin=origin,
                source=Source(kind="schedule", label=label, at=self.d.clock.now_iso()),
                text=row.prompt,
                agent=row.agent,
                notify=row.notify,
                coalesce_key=coalesce_key(row.id),
            )
        )

    async def _deliver(self, row: ScheduleRow, fire_time: str, missed: int) -> None:
        try:
            submitted = await self._submit(row, fire_time, missed)
        except AlpError as exc:
            # It can never run as asked (thread closed, agent gone from the config …).
            at, reason = self.d.clock.now_iso(), redact(exc.message).text

            async def stop(tx: Tx) -> None:
                await store.stop_schedule(tx, row.id, reason, at)

            await self.d.store.write(stop)
            log.warning("schedule_stopped", schedule=row.id, error=exc.name)
            await self._changed(row.id, "stopped")
            return
        await self._fired(row.id, fire_time, joined=submitted.status == "coalesced")
        self.fired += 1
        log.info("fired", schedule=row.id, fire_time=fire_time, status=submitted.status)
        await self._changed(row.id, "fired")

    async def _fired(self, schedule_id: str, fire_time: str, *, joined: bool) -> None:
        async def unit(tx: Tx) -> None:
            await store.clear_fire(tx, schedule_id, fire_time, joined=joined)

        await self.d.store.write(unit)

    async def _changed(self, schedule_id: str, change: str) -> None:
        owner_uid = await store.schedule_owner(self.d.store, schedule_id)
        if owner_uid is None:
            return
        caller = owner_caller(owner_uid)
        schedule = await self.schedules.show(caller, m.ScheduleRef(schedule_id=schedule_id))
        self.schedules.publish(schedule, change)
