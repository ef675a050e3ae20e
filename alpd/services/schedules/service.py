"""Schedules: create, list, show, pause, resume, delete (the scheduler fires them).

A schedule belongs to a thread and its owner. Its rule is checked at create (a bad cron
expression, duration, time or zone is SCHEDULE_INVALID with the reason), and so is the run
it would start (agent, runtime, program), so nothing is stored that could never fire.
Every change is immediate: it is one transaction, it wakes the scheduler (which re-reads the
next due fire), and it is announced as `schedule/changed`.

A schedule also stops when its thread is closed (in the close's transaction) or when a fire
finds it can never run (the scheduler); each stop is announced as `schedule/changed` with
change `stopped`, like any other change.

Pause withdraws a fire waiting for its busy thread; resume plans from the moment of resuming
(fires that fell while paused were not missed: nobody wanted them). Delete removes the
schedule; its runs stay in their thread, and their origin still names it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from alpd.clock import iso
from alpd.domain.runs.policy import Origin
from alpd.domain.schedules.plan import (
    AtRule,
    Rule,
    describe,
    next_fire,
    parse_at,
    parse_cron,
    parse_every,
    parse_zone,
)
from alpd.domain.secrets.filter import redact
from alpd.errors import InvalidArgument, ScheduleInvalid, ScheduleNotFound, ThreadClosed
from alpd.services.budgets.service import limits_from
from alpd.services.context import Caller
from alpd.services.conversation.destinations import resolve_destinations
from alpd.services.conversation.wake import agent_for_thread, prepare_background_root
from alpd.services.runs.executions import Executions
from alpd.services.threads.lifecycle import check_owner
from alpd.store import schedules as store
from alpd.store.budgets import clear_budget, set_budget
from alpd.store.db import Tx
from alpd.store.schedule_stats import RunStats, run_stats
from alpd.store.schedules import ScheduleRow
from alpd.store.threads.shell import load_thread
from protocol import jsonrpc
from protocol import messages as m

SCHEDULE_PREFIX = "sched_"
PROMPT_MAX_BYTES = 16 * 1024


def parse_time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def rule_of(schedule: ScheduleRow) -> Rule:
    """The stored rule, as checked at create."""
    if schedule.rule == "cron":
        return parse_cron(schedule.expression, schedule.timezone)
    if schedule.rule == "every":
        return parse_every(schedule.expression, parse_time(schedule.anchor_at))
    return AtRule(parse_time(schedule.anchor_at))


def rule_text(rule: str, expression: str, timezone: str, anchor_at: str) -> str:
    """The rule in one line, from the stored columns (no parsing: `ps` lists many)."""
    if rule == "cron":
        return f"cron {expression} ({timezone})"
    if rule == "every":
        return f"every {expression}"
    return f"at {anchor_at}"


def rule_line(schedule: ScheduleRow) -> str:
    """`rule_text` of a stored schedule."""
    return rule_text(schedule.rule, schedule.expression, schedule.timezone, schedule.anchor_at)


def schedule_from_row(row: ScheduleRow, stats: RunStats) -> m.Schedule:
    runs, cost, last_execution, last_result = stats.of(row.id)
    rule = row.rule
    return m.Schedule(
        id=row.id,
        thread_id=row.thread_id,
        thread_title=row.thread_title,
        rule=rule_line(row),
        prompt=row.prompt,
        timezone=row.timezone,
        status=row.status,
        catch_up=row.catch_up,
        notify=row.notify,
        created_at=row.created_at,
        updated_at=row.updated_at,
        cron=row.expression if rule == "cron" else None,
        every=row.expression if rule == "every" else None,
        at=row.anchor_at if rule == "at" else None,
        agent=row.agent,
        runtime=row.runtime,
        stop_reason=row.stop_reason,
        next_fire_at=row.next_fire_at,
        last_fire_at=row.last_fire_at,
        last_execution_id=last_execution,
        last_result=last_result,
        queued_fire_at=row.queued_fire_at,
        runs=runs,
        missed=row.missed,
        cost_usd=cost,
        timeout_seconds=row.timeout_seconds,
        budget_usd=row.budget_usd,
        report_to=None if row.report_to is None else list(row.report_to),
        reason=row.reason,
        wake_of=row.wake_of,
    )


class ScheduleService:
    def __init__(self, ex: Executions, wake: Callable[[], None]) -> None:
        self.ex = ex
        self.d = ex.d
        self.wake = wake
        ex.threads.on_schedules_stopped.append(self.stopped_by_close)

    # reading

    async def list(self, caller: Caller, params: m.ScheduleListParams) -> m.ScheduleListResult:
        stats = await run_stats(self.d.store, caller.uid)
        rows = await store.schedules_of(self.d.store, caller.uid, params.thread_id)
        return m.ScheduleListResult(schedules=[schedule_from_row(r, stats) for r in rows])

    async def show(self, caller: Caller, params: m.ScheduleRef) -> m.Schedule:
        row = await self.owned(caller, params.schedule_id)
        stats = await run_stats(self.d.store, caller.uid, params.schedule_id)
        return schedule_from_row(row, stats)

    async def owned(self, caller: Caller, schedule_id: str) -> ScheduleRow:
        row = await store.schedule_by_id(self.d.store, schedule_id)
        if row is None or row.owner_uid != caller.uid:
            # Another user's schedule is not found, not forbidden: ids are not to be probed.
            raise ScheduleNotFound(
                f"no schedule {schedule_id!r}; `alp schedule list` shows yours",
                scheduleId=schedule_id,
            )
        return row

    # writing

    async def create(self, caller: Caller, params: m.ScheduleCreateParams) -> m.Schedule:
        now = self.d.clock.now()
        kind, expression, anchor, rule = _rule_from(params, now)
        prompt = redact(params.prompt).text.strip()
        if not prompt:
            raise InvalidArgument("a schedule needs a prompt: what should the run do?")
        if len(prompt.encode()) > PROMPT_MAX_BYTES:
            raise InvalidArgument(
                f"the prompt is over {PROMPT_MAX_BYTES} bytes; put it in a file and name it",
                limit=PROMPT_MAX_BYTES,
            )
        agent = None
        if params.agent is not None or params.runtime is not None:
            agent = self.ex.resolve_agent(params.agent, params.runtime).name
        report_to = await resolve_destinations(self.d.store, caller, params.thread_id, params.to)
        schedule_id = self.d.clock.new_id(SCHEDULE_PREFIX)
        # Would it run? A missing thread, agent or program is refused now, not at 3 a.m.
        await prepare_background_root(
            self.ex,
            params.thread_id,
            kind="scheduled",
            origin=Origin(
                door="scheduler", by=schedule_id, schedule_id=schedule_id, fire_time=iso(now)
            ),
            prompt=prompt,
            agent=await agent_for_thread(self.ex, params.thread_id, agent),
            requested_by=caller,
            limits=(params.timeout_seconds, params.budget_usd),
        )
        at = iso(now)
        first = next_fire(rule, now)
        budget = None
        if params.total_usd is not None or params.total_tokens is not None:
            budget = limits_from(params.total_usd, params.soft_usd, params.total_tokens, None)
        elif params.soft_usd is not None:
            raise InvalidArgument("a soft budget needs a hard one: give --total-usd too")

        async def unit(tx: Tx) -> None:
            thread = await load_thread(tx, params.thread_id)
            check_owner(thread, caller)
            if thread.status != "open":
                raise ThreadClosed(
                    f"thread {params.thread_id} is {thread.status}: nothing can run in it",
                    threadId=params.thread_id,
                )
            await store.insert_schedule(
                tx,
                store.NewSchedule(
                    id=schedule_id,
                    owner_uid=caller.uid,
                    thread_id=params.thread_id,
                    rule=kind,
                    expression=expression,
                    timezone=params.timezone,
                    anchor_at=anchor,
                    prompt=prompt,
                    agent=agent,
                    runtime=params.runtime,
                    notify=params.notify,
                    catch_up=params.catch_up,
                    next_fire_at=iso(first) if first else None,
                    at=at,
                    timeout_seconds=params.timeout_seconds,
                    budget_usd=params.budget_usd,
                    report_to=report_to,
                    host_id=self.d.host_id,
                ),
            )
            if budget is not None:
                await set_budget(tx, "schedule", schedule_id, caller.uid, budget, at)

        await self.d.store.write(unit)
        return await self._changed(caller, schedule_id, "created")

    async def pause(self, caller: Caller, params: m.ScheduleRef) -> m.Schedule:
        row = await self.owned(caller, params.schedule_id)
        check_live(row)
        at = self.d.clock.now_iso()

        async def unit(tx: Tx) -> None:
            await store.pause_schedule(tx, row.id, at)
            await withdraw_queued_fire(tx, row.id, "the schedule was paused")

        await self.d.store.write(unit)
        return await self._changed(caller, row.id, "paused")

    async def resume(self, caller: Caller, params: m.ScheduleRef) -> m.Schedule:
        row = await self.owned(caller, params.schedule_id)
        check_live(row)
        now = self.d.clock.now()
        following = next_fire(rule_of(row), now)

        async def unit(tx: Tx) -> None:
            await store.resume_schedule(
                tx,
                row.id,
                status="active" if following else "done",
                accounted_until=iso(now),
                next_fire=iso(following) if following else None,
                at=iso(now),
            )

        await self.d.store.write(unit)
        return await self._changed(caller, row.id, "resumed")

    async def delete(self, caller: Caller, params: m.ScheduleRef) -> m.Schedule:
        row = await self.owned(caller, params.schedule_id)
        schedule = schedule_from_row(row, await run_stats(self.d.store, caller.uid, row.id))

        async def unit(tx: Tx) -> None:
            await withdraw_queued_fire(tx, row.id, "the schedule was deleted")
            await store.delete_schedule(tx, row.id)
            await clear_budget(tx, "schedule", row.id)

        await self.d.store.write(unit)
        self.publish(schedule, "deleted")
        self.wake()
        return schedule

    async def announce(self, caller: Caller, schedule_id: str, change: str) -> m.Schedule:
        """Publish `schedule/changed` for a change made elsewhere (a usage limit's wake)."""
        return await self._changed(caller, schedule_id, change)

    async def _changed(self, caller: Caller, schedule_id: str, change: str) -> m.Schedule:
        schedule = await self.show(caller, m.ScheduleRef(schedule_id=schedule_id))
        self.publish(schedule, change)
        self.wake()
        return schedule

    async def stopped_by_close(self, caller: Caller, schedule_ids: Sequence[str]) -> None:
        """Announce the schedules a thread's close stopped (already committed)."""
        for schedule_id in schedule_ids:
            try:
                await self._changed(caller, schedule_id, "stopped")
            except ScheduleNotFound:
                continue  # deleted since: its delete was announced

    def publish(self, schedule: m.Schedule, change: str) -> None:
        frame = jsonrpc.encode_notification(
            "schedule/changed", m.ScheduleChanged(schedule=schedule, change=change)
        )
        self.d.events.publish("schedule/changed", frame, schedule.thread_id)


def coalesce_key(schedule_id: str) -> str:
    """A schedule's fires share one key: a busy thread holds at most one of them."""
    return f"schedule:{schedule_id}"


async def withdraw_queued_fire(tx: Tx, schedule_id: str, reason: str) -> None:
    """The schedule's fire waiting in its thread's queue, if any, withdrawn (failed)."""
    await store.withdraw_queued_fire(tx, coalesce_key(schedule_id), reason)


def check_live(row: ScheduleRow) -> None:
    if row.status in ("stopped", "done"):
        why = f" ({row.stop_reason})" if row.stop_reason else ""
        raise InvalidArgument(
            f"schedule {row.id} is {row.status}{why}; make a new one with `alp schedule add`",
            scheduleId=row.id,
            status=row.status,
        )


def _rule_from(params: m.ScheduleCreateParams, now: datetime) -> tuple[str, str, str, Rule]:
    """(kind, expression, anchor, rule) from exactly one of cron, every and at."""
    given = [k for k in ("cron", "every", "at") if getattr(params, k) is not None]
    if len(given) != 1:
        raise ScheduleInvalid(
            "give exactly one of cron, every and at"
            + (f" (got {', '.join(given)})" if given else ""),
            field="rule",
        )
    parse_zone(params.timezone)
    anchor = iso(now)
    if params.cron is not None:
        rule: Rule = parse_cron(params.cron, params.timezone)
        return "cron", " ".join(params.cron.split()), anchor, rule
    if params.every is not None:
        rule = parse_every(params.every, parse_time(anchor))
        return "every", describe(rule).removeprefix("every "), anchor, rule
    assert params.at is not None
    at_rule = parse_at(params.at, params.timezone, now.astimezone(UTC))
    return "at", params.at, iso(at_rule.at), at_rule


__all__ = [
    "SCHEDULE_PREFIX",
    "ScheduleService",
    "check_live",
    "coalesce_key",
    "parse_time",
    "rule_line",
    "rule_of",
    "rule_text",
    "schedule_from_row",
    "withdraw_queued_fire",
]
