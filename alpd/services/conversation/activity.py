"""What is running (`daemon/ps`) and what ran (`activity/list`), with cost per job.

Cost is the execution's `cost_usd`: what the runtime reported in its transcript, else its
usage at the config's prices (`[runtimes.X] prices`), kept current by the history sync while
a run goes on (it reads a running root's transcript every tick). `temp` work is left out of
`ps` unless asked for (`all`), and counted. `ps` also lists the processes runs left behind
(alive after their execution settled), found by the label they inherited.

Both are reads over indexed rows (unsettled executions, queued deliveries, the caller's
schedules, executions by creation time): no transcript is opened to answer them.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

import anyio
import psutil

from alpd import __version__
from alpd.clock import iso
from alpd.domain.budgets.levels import burn_per_hour, forecast
from alpd.errors import InvalidArgument
from alpd.services.context import Caller
from alpd.services.schedules.service import ScheduleService, coalesce_key, parse_time, rule_text
from alpd.store.conversation.activity import (
    ActivityRow,
    PsScheduleRow,
    RunningJob,
    activity_rows,
    ps_rows,
)
from alpd.store.db import Store
from alpd.store.runs import settled_among
from alpd.store.schedule_stats import RunStats
from alpd.supervisor.processes import labelled_processes
from protocol import messages as m

__all__ = ["activity", "ps"]

_PROCESS = psutil.Process()


def _schedule(row: PsScheduleRow, stats: RunStats, waiting: dict[str, str | None]) -> m.PsSchedule:
    runs, cost, last_execution, last_result = stats.of(row.id)
    return m.PsSchedule(
        id=row.id,
        thread_id=row.thread_id,
        thread_title=row.thread_title,
        rule=rule_text(row.rule, row.expression, row.timezone, row.anchor_at),
        status=row.status,
        next_fire_at=row.next_fire_at,
        last_execution_id=last_execution,
        last_result=last_result,
        queued_fire_at=waiting.get(coalesce_key(row.id)),
        runs=runs,
        missed=row.missed,
        cost_usd=cost,
        reason=row.reason,
    )


def _tokens(usage: m.Usage | None) -> int:
    if usage is None:
        return 0
    return (
        usage.input_tokens
        + usage.output_tokens
        + usage.cache_read_tokens
        + usage.cache_creation_tokens
    )


def _job(row: RunningJob, now: datetime) -> m.PsJob:
    begun = parse_time(row.started_at or row.created_at)
    running = max((now - begun).total_seconds(), 0.0)
    remaining = None if row.timeout_seconds is None else row.timeout_seconds - running
    burn = burn_per_hour(row.cost_usd, running)
    ahead = forecast(row.cost_usd, running, remaining)
    return m.PsJob(
        execution_id=row.id,
        root_id=row.root_id,
        parent_id=row.parent_id,
        kind=row.kind,
        origin=row.origin,
        runtime=row.runtime,
        agent=row.agent,
        status=row.status,
        created_at=row.created_at,
        started_at=row.started_at,
        elapsed_seconds=round(max((now - begun).total_seconds(), 0.0), 3),
        thread_id=row.thread_id,
        thread_title=row.title,
        host=row.host,
        pid=row.pid,
        usage=row.usage,
        tokens=_tokens(row.usage),
        cost_usd=row.cost_usd,
        burn_usd_per_hour=None if burn is None else round(burn, 6),
        forecast_usd=None if ahead is None else round(ahead, 6),
        timeout_seconds=row.timeout_seconds,
    )


async def ps(
    schedules: ScheduleService,
    caller: Caller,
    params: m.PsParams,
    services: list[m.TaskState],
    uptime_seconds: float,
) -> m.PsResult:
    now = schedules.d.clock.now()
    running, waiting, stats, listed = await ps_rows(schedules.d.store, caller.uid)
    jobs = sorted((_job(row, now) for row in running), key=lambda job: job.created_at)
    shown = [job for job in jobs if params.all or job.kind != "temp"]
    queued = [
        m.PsDelivery(
            id=row.id,
            thread_id=row.thread_id,
            thread_title=row.title,
            kind=row.source_kind,
            source=row.source,
            queued_at=row.created_at,
            route=row.route,
        )
        for row in waiting
    ]
    leftovers = await _leftovers(schedules.d.store, caller.uid)
    # a schedule's waiting fire, by its coalescing key (instead of a subquery per schedule)
    fires = {row.coalesce_key: row.fire_time for row in waiting if row.coalesce_key}
    return m.PsResult(
        daemon=m.PsDaemon(
            pid=os.getpid(),
            version=__version__,
            uptime_seconds=round(uptime_seconds, 3),
            rss_bytes=_PROCESS.memory_info().rss,
        ),
        jobs=shown,
        queued=queued,
        schedules=[_schedule(row, stats, fires) for row in listed],
        services=services,
        hidden=len(jobs) - len(shown),
        cost_usd=round(sum(job.cost_usd or 0.0 for job in shown), 6),
        leftovers=leftovers,
    )


async def _leftovers(store: Store, uid: int) -> list[m.PsLeftover]:
    """Processes still alive whose run has settled: found by the `ALP_EXECUTION_ID` label a
    run's processes inherit (one that dropped it is not found), the scan off the loop."""
    labelled = await anyio.to_thread.run_sync(labelled_processes, uid)
    if not labelled:
        return []
    settled = {
        row.id: row for row in await settled_among(store, uid, sorted({x[0] for x in labelled}))
    }
    return [
        m.PsLeftover(
            execution_id=execution_id,
            pid=pid,
            command=command,
            thread_id=settled[execution_id].thread_id,
            settled_at=settled[execution_id].settled_at,
            outcome=settled[execution_id].outcome,
        )
        for execution_id, pid, command in sorted(labelled, key=lambda x: (x[0], x[1]))
        if execution_id in settled
    ]


async def activity(
    schedules: ScheduleService, caller: Caller, params: m.ActivityParams
) -> m.ActivityResult:
    """Executions of the caller, newest first, each with its report."""
    since: str | None = None
    if params.since is not None:
        try:
            when = parse_time(params.since)
        except ValueError as exc:
            raise InvalidArgument(
                f"since {params.since!r} is not an ISO 8601 time (2026-11-30T04:00:00Z)",
                since=params.since,
            ) from exc
        since = iso(when) if when.tzinfo else iso(when.replace(tzinfo=UTC))
    rows = await activity_rows(
        schedules.d.store,
        caller.uid,
        since=since,
        thread_id=params.thread_id,
        kind=params.kind,
        limit=params.limit,
    )
    items = [_item(row) for row in rows]
    ran = sum(i.cost_usd or 0.0 for i in items if not i.imported)
    imported = sum(i.cost_usd or 0.0 for i in items if i.imported)
    return m.ActivityResult(
        items=items, cost_usd=round(ran, 6), imported_cost_usd=round(imported, 6)
    )


def _item(row: ActivityRow) -> m.ActivityItem:
    duration = row.duration_seconds
    if duration is None and row.settled_at:
        begun = parse_time(row.started_at or row.created_at)
        duration = round((parse_time(row.settled_at) - begun).total_seconds(), 3)
    imported = row.origin.door == "import"
    return m.ActivityItem(
        execution_id=row.id,
        kind=row.kind,
        origin=row.origin,
        runtime=row.runtime,
        agent=row.agent,
        status=row.status,
        created_at=row.created_at,
        thread_id=row.thread_id,
        thread_title=row.title,
        sequence=row.sequence,
        outcome=row.outcome,
        started_at=row.started_at,
        settled_at=row.settled_at,
        duration_seconds=duration,
        usage=row.usage,
        cost_usd=row.cost_usd,
        report=row.report,
        at=(row.started_at or row.created_at) if imported else row.created_at,
        imported=imported,
    )
