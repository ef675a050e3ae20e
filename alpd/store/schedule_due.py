"""What the scheduler reads to know what is due: the schedules one host fires (each schedule
is fired by one host, the one it was made on or the one that took that host over;
docs/many-machines.md), their waiting fires and the next fire time."""

from __future__ import annotations

from alpd.store.db import Store
from alpd.store.schedules import ScheduleRow, schedule_row

__all__ = ["due_schedules", "firing_schedules", "next_fire_at"]


def _of_host(host_id: str | None) -> tuple[str, tuple[str, ...]]:
    """The condition (and its parameter) keeping the schedules host `host_id` fires (None:
    every one: a daemon without hosts). A schedule with no host (written by a path that did
    not name one) is anybody's: the fire's transaction lets one host fire it."""
    if host_id is None:
        return "", ()
    return " AND (host_id IS NULL OR host_id = ?)", (host_id,)


async def firing_schedules(store: Store, host_id: str | None = None) -> list[ScheduleRow]:
    """Schedules with a fire recorded and not yet cleared (a crash between the two)."""
    where, params = _of_host(host_id)
    rows = await store.fetchall(
        f"SELECT * FROM schedules WHERE firing_at IS NOT NULL{where}", params
    )
    return [schedule_row(row) for row in rows]


async def due_schedules(store: Store, now: str, host_id: str | None = None) -> list[ScheduleRow]:
    """Active schedules (of host `host_id`) whose next fire is at or before `now`, earliest
    first."""
    where, params = _of_host(host_id)
    rows = await store.fetchall(
        f"SELECT * FROM schedules WHERE status = 'active' AND next_fire_at <= ?{where} "
        "ORDER BY next_fire_at",
        (now, *params),
    )
    return [schedule_row(row) for row in rows]


async def next_fire_at(store: Store, host_id: str | None = None) -> str | None:
    """The earliest next fire of an active schedule (of host `host_id`)."""
    where, params = _of_host(host_id)
    row = await store.fetchone(
        f"SELECT min(next_fire_at) FROM schedules WHERE status = 'active'{where}", params
    )
    if row is None or row[0] is None:
        return None
    return str(row[0])
