"""SQL over `schedules` (migration V9) and what a schedule's runs and waiting fire are.

The service (`alpd.services.schedules.service`) decides; the scheduler
(`alpd.background.scheduler`) fires. Each of their units of work calls these functions with
the `Tx` it was given, in its own order: a fire is claimed by recording it on its row
(`record_fire`), handed to the delivery queue, then cleared (`clear_fire`), the claim and
the clearing each one transaction of their caller's.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

from alpd.store.db import Store, Tx
from protocol.messages.schedules import CatchUp, ScheduleStatus

__all__ = [
    "FireRecord",
    "FireState",
    "NewSchedule",
    "ScheduleRow",
    "claim_fire",
    "clear_fire",
    "delete_schedule",
    "fire_delivered",
    "fire_state",
    "insert_schedule",
    "pause_schedule",
    "record_fire",
    "resume_schedule",
    "schedule_by_id",
    "schedule_limits",
    "schedule_owner",
    "schedule_row",
    "schedules_of",
    "stop_schedule",
    "withdraw_queued_fire",
]


@dataclass(frozen=True, slots=True)
class ScheduleRow:
    """A stored schedule; with the title of its thread and its waiting fire when read for
    a view (`schedules_of`, `schedule_by_id`)."""

    id: str
    owner_uid: int
    thread_id: str
    rule: str
    expression: str
    timezone: str
    anchor_at: str
    prompt: str
    agent: str | None
    runtime: str | None
    notify: bool
    catch_up: CatchUp
    status: ScheduleStatus
    stop_reason: str | None
    accounted_until: str
    next_fire_at: str | None
    firing_at: str | None
    firing_missed: int
    last_fire_at: str | None
    missed: int
    created_at: str
    updated_at: str
    thread_title: str | None = None
    queued_fire_at: str | None = None
    #: the limits of the roots it fires (None: the agent's)
    timeout_seconds: int | None = None
    budget_usd: float | None = None
    #: where its reports go besides its thread (alpd.domain.report_destinations); None: chats
    report_to: tuple[str, ...] | None = None
    #: why alp made it ('usage-limit': the wake after a usage limit) and the run it follows
    reason: str | None = None
    wake_of: str | None = None


def schedule_row(row: sqlite3.Row) -> ScheduleRow:
    """A schedule selected with `SELECT *` (not for a view)."""
    return _schedule(row, view=False)


def _schedule(row: sqlite3.Row, *, view: bool) -> ScheduleRow:
    return ScheduleRow(
        id=row["id"],
        owner_uid=row["owner_uid"],
        thread_id=row["thread_id"],
        rule=row["rule"],
        expression=row["expression"],
        timezone=row["timezone"],
        anchor_at=row["anchor_at"],
        prompt=row["prompt"],
        agent=row["agent"],
        runtime=row["runtime"],
        notify=bool(row["notify"]),
        catch_up=row["catch_up"],
        status=row["status"],
        stop_reason=row["stop_reason"],
        accounted_until=row["accounted_until"],
        next_fire_at=row["next_fire_at"],
        firing_at=row["firing_at"],
        firing_missed=row["firing_missed"],
        last_fire_at=row["last_fire_at"],
        missed=row["missed"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        thread_title=row["thread_title"] if view else None,
        queued_fire_at=row["queued_fire_at"] if view else None,
        timeout_seconds=row["timeout_seconds"],
        budget_usd=row["budget_usd"],
        report_to=None if row["report_to"] is None else tuple(json.loads(row["report_to"])),
        reason=row["reason"],
        wake_of=row["wake_of"],
    )


#: the fire of a schedule waiting in its thread's delivery queue, if any
_QUEUED_FIRE = """(
    SELECT json_extract(d.origin, '$.fireTime') FROM deliveries d
    WHERE d.thread_id = s.thread_id AND d.coalesce_key = 'schedule:' || s.id
        AND d.status = 'queued'
) AS queued_fire_at"""

_VIEW = (
    f"SELECT s.*, t.title AS thread_title, {_QUEUED_FIRE} FROM schedules s "
    "JOIN threads t ON t.id = s.thread_id"
)


# reading


async def schedules_of(
    store: Store, owner_uid: int, thread_id: str | None = None
) -> list[ScheduleRow]:
    """The owner's schedules (of one thread, if named), oldest first."""
    sql = f"{_VIEW} WHERE s.owner_uid = ?"
    args: list[object] = [owner_uid]
    if thread_id is not None:
        sql += " AND s.thread_id = ?"
        args.append(thread_id)
    rows = await store.fetchall(sql + " ORDER BY s.created_at", args)
    return [_schedule(row, view=True) for row in rows]


async def schedule_by_id(store: Store, schedule_id: str) -> ScheduleRow | None:
    row = await store.fetchone(f"{_VIEW} WHERE s.id = ?", (schedule_id,))
    return None if row is None else _schedule(row, view=True)


async def schedule_limits(store: Store, schedule_id: str) -> tuple[int | None, float | None]:
    """The time limit and cost cap a schedule sets on the roots it fires (None: the agent's,
    also for a schedule that is gone)."""
    row = await store.fetchone(
        "SELECT timeout_seconds, budget_usd FROM schedules WHERE id = ?", (schedule_id,)
    )
    return (None, None) if row is None else (row["timeout_seconds"], row["budget_usd"])


async def schedule_owner(store: Store, schedule_id: str) -> int | None:
    rows = await store.fetchall("SELECT owner_uid FROM schedules WHERE id = ?", (schedule_id,))
    if not rows:
        return None
    return int(rows[0]["owner_uid"])


async def fire_delivered(store: Store, thread_id: str, schedule_id: str, fire_time: str) -> bool:
    """Whether a delivery of the thread carries this fire of the schedule."""
    known = await store.fetchone(
        "SELECT 1 FROM deliveries WHERE thread_id = ? AND source_kind = 'schedule' "
        "AND json_extract(origin, '$.scheduleId') = ? "
        "AND json_extract(origin, '$.fireTime') = ?",
        (thread_id, schedule_id, fire_time),
    )
    return known is not None


# writing (each inside its caller's unit of work)


@dataclass(frozen=True, slots=True)
class NewSchedule:
    id: str
    owner_uid: int
    thread_id: str
    rule: str
    expression: str
    timezone: str
    anchor_at: str
    prompt: str
    agent: str | None
    runtime: str | None
    notify: bool
    catch_up: CatchUp
    next_fire_at: str | None
    at: str
    timeout_seconds: int | None = None
    budget_usd: float | None = None
    report_to: tuple[str, ...] | None = None
    #: the host that fires it: the one it was made on
    host_id: str | None = None


async def insert_schedule(tx: Tx, new: NewSchedule) -> None:
    """An `active` schedule, accounted until its creation."""
    await tx.execute(
        "INSERT INTO schedules (id, owner_uid, thread_id, rule, expression, timezone, "
        "anchor_at, prompt, agent, runtime, notify, catch_up, status, accounted_until, "
        "next_fire_at, created_at, updated_at, timeout_seconds, budget_usd, report_to, host_id) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            new.id,
            new.owner_uid,
            new.thread_id,
            new.rule,
            new.expression,
            new.timezone,
            new.anchor_at,
            new.prompt,
            new.agent,
            new.runtime,
            int(new.notify),
            new.catch_up,
            new.at,
            new.next_fire_at,
            new.at,
            new.at,
            new.timeout_seconds,
            new.budget_usd,
            None if new.report_to is None else json.dumps(list(new.report_to)),
            new.host_id,
        ),
    )


async def pause_schedule(tx: Tx, schedule_id: str, at: str) -> None:
    """An active schedule paused (no next fire); any other is left as it is."""
    await tx.execute(
        "UPDATE schedules SET status = 'paused', next_fire_at = NULL, updated_at = ? "
        "WHERE id = ? AND status = 'active'",
        (at, schedule_id),
    )


async def resume_schedule(
    tx: Tx, schedule_id: str, *, status: str, accounted_until: str, next_fire: str | None, at: str
) -> None:
    """A paused schedule resumed (`active`, or `done` when no fire is left)."""
    await tx.execute(
        "UPDATE schedules SET status = ?, accounted_until = ?, next_fire_at = ?, "
        "updated_at = ? WHERE id = ? AND status = 'paused'",
        (status, accounted_until, next_fire, at, schedule_id),
    )


async def delete_schedule(tx: Tx, schedule_id: str) -> None:
    await tx.execute("DELETE FROM schedule_fires WHERE schedule_id = ?", (schedule_id,))
    await tx.execute("DELETE FROM schedules WHERE id = ?", (schedule_id,))


async def claim_fire(
    tx: Tx, schedule_id: str, fire_time: str, *, host_id: str | None, accounted_until: str, at: str
) -> bool:
    """Claim the fire of `schedule_id` at `fire_time` for `host_id` (migration V32): True when
    this transaction's row is the claim, False when the key was taken (another host, or a pass
    before, fired it). A schedule without a host becomes the claimer's, so only that host
    recovers the fire after a crash. Rows of fires before `accounted_until` (the schedule's,
    before this pass) are dropped: no pass plans a fire before it again."""
    cursor = await tx.execute(
        "INSERT OR IGNORE INTO schedule_fires (schedule_id, fire_time, host_id, claimed_at) "
        "VALUES (?, ?, ?, ?)",
        (schedule_id, fire_time, host_id, at),
    )
    if cursor.rowcount != 1:
        return False
    await tx.execute(
        "DELETE FROM schedule_fires WHERE schedule_id = ? AND fire_time < ?",
        (schedule_id, accounted_until),
    )
    if host_id is not None:
        await tx.execute(
            "UPDATE schedules SET host_id = ? WHERE id = ? AND host_id IS NULL",
            (host_id, schedule_id),
        )
    return True


async def withdraw_queued_fire(tx: Tx, coalesce_key: str, reason: str) -> None:
    """The fire waiting under `coalesce_key` in a delivery queue, failed with `reason`."""
    await tx.execute(
        "UPDATE deliveries SET status = 'failed', error = ? "
        "WHERE coalesce_key = ? AND status = 'queued'",
        (reason, coalesce_key),
    )


@dataclass(frozen=True, slots=True)
class FireState:
    """What a pass checks of a due schedule inside its transaction."""

    accounted_until: str
    status: str
    thread_id: str
    thread_status: str
    #: the host that fires it (None: from before hosts)
    host_id: str | None = None


async def fire_state(tx: Tx, schedule_id: str) -> FireState | None:
    async with tx.execute(
        "SELECT s.accounted_until, s.status, t.status AS thread_status, t.id AS thread, "
        "s.host_id "
        "FROM schedules s JOIN threads t ON t.id = s.thread_id WHERE s.id = ?",
        (schedule_id,),
    ) as cur:
        row = await cur.fetchone()
    if row is None:
        return None
    return FireState(
        accounted_until=row["accounted_until"],
        status=row["status"],
        thread_id=row["thread"],
        thread_status=row["thread_status"],
        host_id=row["host_id"],
    )


@dataclass(frozen=True, slots=True)
class FireRecord:
    """A pass's outcome for one schedule: accounted until `at`, its next fire (none: `done`),
    the fires it missed, and the fire it runs (if any), recorded as `firing_at`."""

    at: str
    next_fire: str | None
    missed: int
    fire_time: str | None
    fire_missed: int


async def record_fire(tx: Tx, schedule_id: str, fire: FireRecord) -> None:
    await tx.execute(
        "UPDATE schedules SET accounted_until = ?, next_fire_at = ?, status = ?, "
        "missed = missed + ?, firing_at = ?, firing_missed = ?, "
        "last_fire_at = coalesce(?, last_fire_at), updated_at = ? WHERE id = ?",
        (
            fire.at,
            fire.next_fire,
            "active" if fire.next_fire else "done",
            fire.missed,
            fire.fire_time,
            fire.fire_missed,
            fire.fire_time,
            fire.at,
            schedule_id,
        ),
    )


async def clear_fire(tx: Tx, schedule_id: str, fire_time: str, *, joined: bool) -> None:
    """The recorded fire delivered (a fire that joined a waiting one counts as missed)."""
    await tx.execute(
        "UPDATE schedules SET firing_at = NULL, firing_missed = 0, "
        "missed = missed + ? WHERE id = ? AND firing_at = ?",
        (int(joined), schedule_id, fire_time),
    )


async def stop_schedule(tx: Tx, schedule_id: str, reason: str, at: str) -> None:
    """The schedule stopped for good, with the reason (no next fire, no recorded fire)."""
    await tx.execute(
        "UPDATE schedules SET status = 'stopped', stop_reason = ?, next_fire_at = NULL, "
        "firing_at = NULL, updated_at = ? WHERE id = ?",
        (reason, at, schedule_id),
    )
