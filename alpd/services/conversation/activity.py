"""What is running (`daemon/ps`) and what ran (`activity/list`), with cost per job.

Cost is the execution's `cost_usd`: what the runtime reported in its transcript, else its
usage at the config's prices (`[runtimes.X] prices`), kept current by the history sync while
a run goes on. `temp` work is left out of `ps` unless asked for (`all`), and counted.

Both are reads over indexed rows (unsettled executions, queued deliveries, the caller's
schedules, executions by creation time): no transcript is opened to answer them.
"""

from __future__ import annotations

import os
import sqlite3
from datetime import UTC, datetime

import msgspec
import psutil

from alpd import __version__
from alpd.clock import iso
from alpd.errors import InvalidArgument
from alpd.services.context import Caller
from alpd.services.schedules.service import ScheduleService, coalesce_key, parse_time, rule_text
from alpd.store.schedules import STATS, RunStats
from protocol import messages as m

__all__ = ["activity", "ps"]

_origin = msgspec.json.Decoder(m.Origin)
_usage = msgspec.json.Decoder(m.Usage)

_PROCESS = psutil.Process()

# `+e.owner_uid`: no index on the owner, so the planner walks the partial index of unsettled
# executions (a few) rather than every execution the owner ever had.
_RUNNING = """
    SELECT e.id, e.root_id, e.parent_id, e.kind, e.origin, e.runtime, e.agent, e.status,
        e.thread_id, e.pid, e.created_at, e.started_at, e.usage, e.cost_usd, t.title
    FROM executions e LEFT JOIN threads t ON t.id = e.thread_id
    WHERE e.status != 'settled' AND +e.owner_uid = ?
"""

_QUEUED = """
    SELECT d.id, d.thread_id, d.source_kind, d.source, d.created_at, d.coalesce_key, d.route,
        json_extract(d.origin, '$.fireTime') AS fire_time, t.title
    FROM deliveries d JOIN threads t ON t.id = d.thread_id
    WHERE d.status = 'queued' AND d.owner_uid = ?
    ORDER BY d.id LIMIT 1000
"""


_SCHEDULES = """
    SELECT s.id, s.thread_id, s.rule, s.expression, s.timezone, s.anchor_at, s.status,
        s.next_fire_at, s.missed, t.title AS thread_title
    FROM schedules s JOIN threads t ON t.id = s.thread_id
    WHERE s.owner_uid = ? AND s.status IN ('active', 'paused')
    ORDER BY s.next_fire_at IS NULL, s.next_fire_at
"""


def _schedule(row: sqlite3.Row, stats: RunStats, waiting: dict[str, str]) -> m.PsSchedule:
    runs, cost, last_execution, last_result = stats.of(row["id"])
    return m.PsSchedule(
        id=row["id"],
        thread_id=row["thread_id"],
        thread_title=row["thread_title"],
        rule=rule_text(row["rule"], row["expression"], row["timezone"], row["anchor_at"]),
        status=row["status"],
        next_fire_at=row["next_fire_at"],
        last_execution_id=last_execution,
        last_result=last_result,
        queued_fire_at=waiting.get(coalesce_key(row["id"])),
        runs=runs,
        missed=row["missed"],
        cost_usd=cost,
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


def _job(row: sqlite3.Row, now: datetime) -> m.PsJob:
    usage = _usage.decode(row["usage"]) if row["usage"] else None
    begun = parse_time(row["started_at"] or row["created_at"])
    return m.PsJob(
        execution_id=row["id"],
        root_id=row["root_id"],
        parent_id=row["parent_id"],
        kind=row["kind"],
        origin=_origin.decode(row["origin"]),
        runtime=row["runtime"],
        agent=row["agent"],
        status=row["status"],
        created_at=row["created_at"],
        started_at=row["started_at"],
        elapsed_seconds=round(max((now - begun).total_seconds(), 0.0), 3),
        thread_id=row["thread_id"],
        thread_title=row["title"],
        pid=row["pid"],
        usage=usage,
        tokens=_tokens(usage),
        cost_usd=row["cost_usd"],
    )


async def ps(
    schedules: ScheduleService,
    caller: Caller,
    params: m.PsParams,
    services: list[m.TaskState],
    uptime_seconds: float,
) -> m.PsResult:
    now = schedules.d.clock.now()
    running, waiting, runs, listed = await schedules.d.store.fetch_many(
        [
            (_RUNNING, (caller.uid,)),
            (_QUEUED, (caller.uid,)),
            (STATS.format(where=""), (caller.uid,)),
            (_SCHEDULES, (caller.uid,)),
        ]
    )
    jobs = sorted((_job(row, now) for row in running), key=lambda job: job.created_at)
    shown = [job for job in jobs if params.all or job.kind != "temp"]
    queued = [
        m.PsDelivery(
            id=row["id"],
            thread_id=row["thread_id"],
            thread_title=row["title"],
            kind=row["source_kind"],
            source=row["source"],
            queued_at=row["created_at"],
            route=row["route"],
        )
        for row in waiting
    ]
    # a schedule's waiting fire, by its coalescing key (instead of a subquery per schedule)
    fires = {row["coalesce_key"]: row["fire_time"] for row in waiting if row["coalesce_key"]}
    stats = RunStats(runs)
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
    )


async def activity(
    schedules: ScheduleService, caller: Caller, params: m.ActivityParams
) -> m.ActivityResult:
    """Executions of the caller, newest first, each with its report."""
    where = ["e.owner_uid = ?"]
    args: list[object] = [caller.uid]
    if params.since is not None:
        try:
            since = parse_time(params.since)
        except ValueError as exc:
            raise InvalidArgument(
                f"since {params.since!r} is not an ISO 8601 time (2026-11-30T04:00:00Z)",
                since=params.since,
            ) from exc
        where.append("e.created_at >= ?")
        args.append(iso(since) if since.tzinfo else iso(since.replace(tzinfo=UTC)))
    if params.thread_id is not None:
        where.append("e.thread_id = ?")
        args.append(params.thread_id)
    if params.kind is not None:
        where.append("e.kind = ?")
        args.append(params.kind)
    args.append(params.limit)
    rows = await schedules.d.store.fetchall(
        "SELECT e.id, e.kind, e.origin, e.runtime, e.agent, e.status, e.outcome, e.thread_id, "
        "e.sequence, e.created_at, e.started_at, e.settled_at, e.usage, e.cost_usd, "
        "coalesce(r.message, e.summary) AS report, r.duration_seconds, t.title "
        "FROM executions e LEFT JOIN threads t ON t.id = e.thread_id "
        "LEFT JOIN reports r ON r.execution_id = e.id "
        f"WHERE {' AND '.join(where)} ORDER BY e.created_at DESC, e.id DESC LIMIT ?",
        args,
    )
    items = [_item(row) for row in rows]
    return m.ActivityResult(items=items, cost_usd=round(sum(i.cost_usd or 0.0 for i in items), 6))


def _item(row: sqlite3.Row) -> m.ActivityItem:
    duration = row["duration_seconds"]
    if duration is None and row["settled_at"]:
        begun = parse_time(row["started_at"] or row["created_at"])
        duration = round((parse_time(row["settled_at"]) - begun).total_seconds(), 3)
    return m.ActivityItem(
        execution_id=row["id"],
        kind=row["kind"],
        origin=_origin.decode(row["origin"]),
        runtime=row["runtime"],
        agent=row["agent"],
        status=row["status"],
        created_at=row["created_at"],
        thread_id=row["thread_id"],
        thread_title=row["title"],
        sequence=row["sequence"],
        outcome=row["outcome"],
        started_at=row["started_at"],
        settled_at=row["settled_at"],
        duration_seconds=duration,
        usage=_usage.decode(row["usage"]) if row["usage"] else None,
        cost_usd=row["cost_usd"],
        report=row["report"],
    )
