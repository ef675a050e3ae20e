"""The reads of `daemon/ps` (what is running) and `activity/list` (what ran).

Both are reads over indexed rows (unsettled executions, queued deliveries, the caller's
schedules, executions by creation time); `ps` asks for its four in one hop to the reader
thread (`Store.fetch_many`), `activity/list` for its one.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import NamedTuple

import msgspec

from alpd.store.db import Store
from alpd.store.schedule_stats import RunStats, stats_sql
from protocol import messages as m

__all__ = [
    "ActivityRow",
    "PsRows",
    "PsScheduleRow",
    "QueuedDelivery",
    "RunningJob",
    "activity_rows",
    "ps_rows",
]

_origin = msgspec.json.Decoder(m.Origin)
_usage = msgspec.json.Decoder(m.Usage)

# `+e.owner_uid`: no index on the owner, so the planner walks the partial index of unsettled
# executions (a few) rather than every execution the owner ever had.
_RUNNING = """
    SELECT e.id, e.root_id, e.parent_id, e.kind, e.origin, e.runtime, e.agent, e.status,
        e.thread_id, e.pid, e.created_at, e.started_at, e.usage, e.cost_usd, t.title, e.host_name,
        CAST(json_extract(CAST(e.policy AS TEXT), '$.timeoutSeconds') AS INTEGER)
        AS timeout_seconds
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
        s.next_fire_at, s.missed, t.title AS thread_title, s.reason
    FROM schedules s JOIN threads t ON t.id = s.thread_id
    WHERE s.owner_uid = ? AND s.status IN ('active', 'paused')
    ORDER BY s.next_fire_at IS NULL, s.next_fire_at
"""


@dataclass(frozen=True, slots=True)
class RunningJob:
    """An unsettled execution of the owner, with its thread's title."""

    id: str
    root_id: str
    parent_id: str | None
    kind: m.Kind
    origin: m.Origin
    runtime: str
    agent: str
    status: m.ExecutionStatus
    thread_id: str | None
    pid: int | None
    created_at: str
    started_at: str | None
    usage: m.Usage | None
    cost_usd: float | None
    title: str | None
    #: its policy's time limit (`timeoutSeconds`), if any
    timeout_seconds: int | None = None
    #: the name of the host that runs it
    host: str | None = None


@dataclass(frozen=True, slots=True)
class QueuedDelivery:
    """A delivery of the owner's waiting in its thread's queue; `fire_time`: the fire it
    carries, for a schedule's (`coalesce_key`)."""

    id: int
    thread_id: str
    source_kind: str
    source: str
    created_at: str
    coalesce_key: str | None
    route: str | None
    fire_time: str | None
    title: str | None


@dataclass(frozen=True, slots=True)
class PsScheduleRow:
    """An active or paused schedule of the owner, as `ps` lists it."""

    id: str
    thread_id: str
    rule: str
    expression: str
    timezone: str
    anchor_at: str
    status: m.ScheduleStatus
    next_fire_at: str | None
    missed: int
    thread_title: str | None
    reason: str | None = None


class PsRows(NamedTuple):
    """What `ps` shows of one owner: running jobs (unordered), queued deliveries (oldest
    first), the runs of their schedules, and the schedules (next to fire first)."""

    running: list[RunningJob]
    queued: list[QueuedDelivery]
    stats: RunStats
    schedules: list[PsScheduleRow]


@dataclass(frozen=True, slots=True)
class ActivityRow:
    """An execution of the owner with its thread's title and its report (or summary)."""

    id: str
    kind: m.Kind
    origin: m.Origin
    runtime: str
    agent: str
    status: m.ExecutionStatus
    outcome: m.Outcome | None
    thread_id: str | None
    sequence: int | None
    created_at: str
    started_at: str | None
    settled_at: str | None
    usage: m.Usage | None
    cost_usd: float | None
    report: str | None
    duration_seconds: float | None
    title: str | None


def _running(row: sqlite3.Row) -> RunningJob:
    return RunningJob(
        id=row["id"],
        root_id=row["root_id"],
        parent_id=row["parent_id"],
        kind=row["kind"],
        origin=_origin.decode(row["origin"]),
        runtime=row["runtime"],
        agent=row["agent"],
        status=row["status"],
        thread_id=row["thread_id"],
        pid=row["pid"],
        created_at=row["created_at"],
        started_at=row["started_at"],
        usage=_usage.decode(row["usage"]) if row["usage"] else None,
        cost_usd=row["cost_usd"],
        title=row["title"],
        timeout_seconds=row["timeout_seconds"],
        host=row["host_name"],
    )


def _queued(row: sqlite3.Row) -> QueuedDelivery:
    return QueuedDelivery(
        id=row["id"],
        thread_id=row["thread_id"],
        source_kind=row["source_kind"],
        source=row["source"],
        created_at=row["created_at"],
        coalesce_key=row["coalesce_key"],
        route=row["route"],
        fire_time=row["fire_time"],
        title=row["title"],
    )


def _schedule(row: sqlite3.Row) -> PsScheduleRow:
    return PsScheduleRow(
        id=row["id"],
        thread_id=row["thread_id"],
        rule=row["rule"],
        expression=row["expression"],
        timezone=row["timezone"],
        anchor_at=row["anchor_at"],
        status=row["status"],
        next_fire_at=row["next_fire_at"],
        missed=row["missed"],
        thread_title=row["thread_title"],
        reason=row["reason"],
    )


async def ps_rows(store: Store, owner_uid: int) -> PsRows:
    """The owner's `ps` reads, in one hop."""
    running, waiting, runs, listed = await store.fetch_many(
        [
            (_RUNNING, (owner_uid,)),
            (_QUEUED, (owner_uid,)),
            (stats_sql(store), (owner_uid,)),
            (_SCHEDULES, (owner_uid,)),
        ]
    )
    return PsRows(
        running=[_running(row) for row in running],
        queued=[_queued(row) for row in waiting],
        stats=RunStats(runs),
        schedules=[_schedule(row) for row in listed],
    )


#: when an execution happened: an imported session's own first entry, else its creation
_AT = (
    "(CASE WHEN json_extract(e.origin, '$.door') = 'import' "
    "THEN coalesce(e.started_at, e.created_at) ELSE e.created_at END)"
)


async def activity_rows(
    store: Store,
    owner_uid: int,
    *,
    since: str | None,
    thread_id: str | None,
    kind: str | None,
    limit: int,
) -> list[ActivityRow]:
    """The owner's executions (at `since` or later, of one thread, of one kind, if named),
    newest first, at most `limit`. An imported session's moment is its own (its transcript's
    first entry, `started_at`), not the import's (`created_at`)."""
    where = ["e.owner_uid = ?"]
    args: list[object] = [owner_uid]
    if since is not None:
        where.append(f"{_AT} >= ?")
        args.append(since)
    if thread_id is not None:
        where.append("e.thread_id = ?")
        args.append(thread_id)
    if kind is not None:
        where.append("e.kind = ?")
        args.append(kind)
    args.append(limit)
    rows = await store.fetchall(
        "SELECT e.id, e.kind, e.origin, e.runtime, e.agent, e.status, e.outcome, e.thread_id, "
        "e.sequence, e.created_at, e.started_at, e.settled_at, e.usage, e.cost_usd, "
        "coalesce(r.message, e.summary) AS report, r.duration_seconds, t.title "
        "FROM executions e LEFT JOIN threads t ON t.id = e.thread_id "
        "LEFT JOIN reports r ON r.execution_id = e.id "
        f"WHERE {' AND '.join(where)} ORDER BY {_AT} DESC, e.id DESC LIMIT ?",
        args,
    )
    return [
        ActivityRow(
            id=row["id"],
            kind=row["kind"],
            origin=_origin.decode(row["origin"]),
            runtime=row["runtime"],
            agent=row["agent"],
            status=row["status"],
            outcome=row["outcome"],
            thread_id=row["thread_id"],
            sequence=row["sequence"],
            created_at=row["created_at"],
            started_at=row["started_at"],
            settled_at=row["settled_at"],
            usage=_usage.decode(row["usage"]) if row["usage"] else None,
            cost_usd=row["cost_usd"],
            report=row["report"],
            duration_seconds=row["duration_seconds"],
            title=row["title"],
        )
        for row in rows
    ]
