"""SQL of the one-off wakes alp schedules itself (a thread woken when its runtime's usage
limit resets, docs/budgets.md): a `schedules` row with a `reason` and the run it follows
(`wake_of`, unique: one wake per run, however often its settle is looked at)."""

from __future__ import annotations

from alpd.store.db import Store, Tx
from alpd.store.schedules import NewSchedule

__all__ = ["insert_wake", "wake_reason"]


async def insert_wake(tx: Tx, new: NewSchedule, reason: str, wake_of: str) -> bool:
    """An `active` one-off schedule (rule `at`) following run `wake_of`; False if that run
    already has its wake (nothing written)."""
    cursor = await tx.execute(
        "INSERT INTO schedules (id, owner_uid, thread_id, rule, expression, timezone, "
        "anchor_at, prompt, agent, runtime, notify, catch_up, status, accounted_until, "
        "next_fire_at, created_at, updated_at, reason, wake_of, host_id) "
        "VALUES (?, ?, ?, 'at', ?, ?, ?, ?, ?, ?, ?, 'one', 'active', ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT DO NOTHING",
        (
            new.id,
            new.owner_uid,
            new.thread_id,
            new.expression,
            new.timezone,
            new.anchor_at,
            new.prompt,
            new.agent,
            new.runtime,
            int(new.notify),
            new.at,
            new.next_fire_at,
            new.at,
            new.at,
            reason,
            wake_of,
            new.host_id,
        ),
    )
    return cursor.rowcount == 1


async def wake_reason(store: Store, schedule_id: str) -> tuple[str | None, str | None] | None:
    """(reason, wake_of) of a schedule, None if it is gone."""
    row = await store.fetchone("SELECT reason, wake_of FROM schedules WHERE id = ?", (schedule_id,))
    return None if row is None else (row["reason"], row["wake_of"])
