"""What the runs of schedules cost and how the last one ended (`schedule/list`, `alp ps`): one
statement over the scheduled executions, written once per backend (SQLite's bare columns of
an aggregate have no PostgreSQL counterpart)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import NamedTuple

from alpd.store.db import Store, dialect_of

__all__ = ["STATS", "STATS_POSTGRES", "RunStat", "RunStats", "run_stats", "stats_sql"]


class RunStat(NamedTuple):
    """What the runs of one schedule cost and how the last one ended."""

    runs: int
    cost_usd: float | None
    last_execution_id: str | None
    last_result: str | None


class RunStats:
    """What the runs of schedules cost and how the last one ended, by schedule id (the rows
    of `STATS`)."""

    def __init__(self, rows: Iterable[sqlite3.Row]) -> None:
        self._stats = {
            row["sid"]: RunStat(
                row["runs"],
                row["cost"],
                row["id"],
                row["outcome"] if row["status"] == "settled" else "running",
            )
            for row in rows
        }

    def of(self, schedule_id: str) -> RunStat:
        return self._stats.get(schedule_id, RunStat(0, None, None, None))


# One pass over the scheduled executions, in the order of the partial index on their
# schedule id (`+owner_uid` keeps the planner on it): per schedule, the count and cost of its
# runs, and — SQLite's bare columns of a max() aggregate — its latest run.
STATS = """
    SELECT json_extract(origin, '$.scheduleId') AS sid, count(*) AS runs,
        sum(cost_usd) AS cost, id, status, outcome, max(created_at)
    FROM executions
    WHERE kind = 'scheduled' AND +owner_uid = ? {where}
    GROUP BY sid
"""
#: the same for PostgreSQL, which has no bare columns: a window per schedule, its latest run
STATS_POSTGRES = """
    SELECT DISTINCT ON (sid) sid, runs, cost, id, status, outcome FROM (
        SELECT json_extract(origin, '$.scheduleId') AS sid, count(*) OVER w AS runs,
            sum(cost_usd) OVER w AS cost, id, status, outcome, created_at
        FROM executions
        WHERE kind = 'scheduled' AND owner_uid = ? {where}
        WINDOW w AS (PARTITION BY json_extract(origin, '$.scheduleId'))
    ) AS runs_of
    ORDER BY sid, created_at DESC, id DESC
"""


def stats_sql(store: Store, where: str = "") -> str:
    """`STATS` in the store's dialect, narrowed by `where`."""
    return (STATS_POSTGRES if dialect_of(store) == "postgres" else STATS).format(where=where)


async def run_stats(store: Store, owner_uid: int, schedule_id: str | None = None) -> RunStats:
    """The stats of the owner's schedules, or of the one named."""
    if schedule_id is None:
        return RunStats(await store.fetchall(stats_sql(store), (owner_uid,)))
    sql = stats_sql(store, "AND json_extract(origin, '$.scheduleId') = ?")
    return RunStats(await store.fetchall(sql, (owner_uid, schedule_id)))
