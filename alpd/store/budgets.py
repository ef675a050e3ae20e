"""SQL over `budgets` (migrations V26, V31) and `rate_windows` (V31): a thread's or a
schedule's limits, and what its executions spent — every execution of the thread (roots and
what they delegated), or every execution a schedule fired. Tokens are input + output + cache,
as `alp ps` counts them. A window limit compares the latest subscription window the runtime
reported (`record_windows`, `windows_of`).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, replace

from alpd.domain.budgets.levels import Limits, Spend
from alpd.domain.budgets.windows import RateWindow, fullest
from alpd.store.db import Store, Tx

__all__ = [
    "StoredBudget",
    "budget_rows",
    "budgets_for_root",
    "clear_budget",
    "mark_warned",
    "owned_budgets",
    "record_windows",
    "set_budget",
    "windows_of",
    "with_window",
]

# CAST: PostgreSQL's json_extract gives text (alpd.store.postgres.schema)
_TOKENS = (
    "coalesce(CAST(json_extract(usage, '$.inputTokens') AS INTEGER), 0)"
    " + coalesce(CAST(json_extract(usage, '$.outputTokens') AS INTEGER), 0)"
    " + coalesce(CAST(json_extract(usage, '$.cacheReadTokens') AS INTEGER), 0)"
    " + coalesce(CAST(json_extract(usage, '$.cacheCreationTokens') AS INTEGER), 0)"
)
#: what a schedule's executions are: the roots it fired and what they delegated
_FIRED = (
    "root_id IN (SELECT id FROM executions WHERE kind = 'scheduled'"
    " AND json_extract(origin, '$.scheduleId') = b.target_id)"
)
#: a budget with its spend (scalar subqueries: the thread's executions or the schedule's)
_WITH_SPEND = f"""
    SELECT b.*,
        CASE b.scope
            WHEN 'thread' THEN (SELECT coalesce(sum(cost_usd), 0.0) FROM executions
                WHERE thread_id = b.target_id)
            ELSE (SELECT coalesce(sum(cost_usd), 0.0) FROM executions WHERE {_FIRED})
        END AS spent_usd,
        CASE b.scope
            WHEN 'thread' THEN (SELECT coalesce(sum({_TOKENS}), 0) FROM executions
                WHERE thread_id = b.target_id)
            ELSE (SELECT coalesce(sum({_TOKENS}), 0) FROM executions WHERE {_FIRED})
        END AS spent_tokens
    FROM budgets b
"""


@dataclass(frozen=True, slots=True)
class StoredBudget:
    scope: str
    target_id: str
    owner_uid: int
    limits: Limits
    spend: Spend
    #: the level a warning was last sent for since the budget was set (None: none yet)
    warned: str | None
    updated_at: str


def _budget(row: sqlite3.Row) -> StoredBudget:
    return StoredBudget(
        scope=row["scope"],
        target_id=row["target_id"],
        owner_uid=row["owner_uid"],
        limits=Limits(
            usd=row["usd"],
            soft_usd=row["soft_usd"],
            tokens=row["tokens"],
            soft_tokens=row["soft_tokens"],
            window_percent=row["window_percent"],
            soft_window_percent=row["soft_window_percent"],
        ),
        spend=Spend(cost_usd=float(row["spent_usd"] or 0.0), tokens=int(row["spent_tokens"] or 0)),
        warned=row["warned"],
        updated_at=row["updated_at"],
    )


# reading


async def budget_rows(store: Store, scope: str, target_ids: list[str]) -> list[StoredBudget]:
    """The budgets of these threads or schedules, with their spend."""
    if not target_ids:
        return []
    marks = ", ".join("?" for _ in target_ids)
    rows = await store.fetchall(
        f"{_WITH_SPEND} WHERE b.scope = ? AND b.target_id IN ({marks})", (scope, *target_ids)
    )
    return [_budget(row) for row in rows]


async def owned_budgets(store: Store, owner_uid: int) -> list[StoredBudget]:
    """Every budget of the owner, with its spend (`alp ps`)."""
    rows = await store.fetchall(
        f"{_WITH_SPEND} WHERE b.owner_uid = ? ORDER BY b.scope, b.target_id LIMIT 1000",
        (owner_uid,),
    )
    return [_budget(row) for row in rows]


async def budgets_for_root(tx: Tx, thread_id: str, schedule_id: str | None) -> list[StoredBudget]:
    """The budgets a new root of this thread (fired by this schedule, if any) counts against,
    read inside the reserving transaction."""
    async with tx.execute(
        f"{_WITH_SPEND} WHERE (b.scope = 'thread' AND b.target_id = ?)"
        " OR (b.scope = 'schedule' AND b.target_id = ?)",
        (thread_id, schedule_id or ""),
    ) as cur:
        rows = await cur.fetchall()
    return [_budget(row) for row in rows]


# writing (each inside its caller's unit of work)


async def set_budget(
    tx: Tx, scope: str, target_id: str, owner_uid: int, limits: Limits, at: str
) -> None:
    """Replace the budget (a new one warns afresh)."""
    await tx.execute(
        "INSERT INTO budgets (scope, target_id, owner_uid, usd, soft_usd, tokens, soft_tokens,"
        " window_percent, soft_window_percent, warned, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)"
        " ON CONFLICT (scope, target_id) DO UPDATE SET usd = excluded.usd,"
        " soft_usd = excluded.soft_usd, tokens = excluded.tokens,"
        " soft_tokens = excluded.soft_tokens, window_percent = excluded.window_percent,"
        " soft_window_percent = excluded.soft_window_percent, warned = NULL,"
        " updated_at = excluded.updated_at",
        (scope, target_id, owner_uid, limits.usd, limits.soft_usd, limits.tokens,
         limits.soft_tokens, limits.window_percent, limits.soft_window_percent, at),
    )  # fmt: skip


async def clear_budget(tx: Tx, scope: str, target_id: str) -> None:
    await tx.execute("DELETE FROM budgets WHERE scope = ? AND target_id = ?", (scope, target_id))


async def mark_warned(tx: Tx, scope: str, target_id: str, level: str, updated_at: str) -> bool:
    """Record that `level` was announced; False if it was already (or the budget changed
    since it was read: `updated_at` no longer matches)."""
    async with tx.execute(
        "UPDATE budgets SET warned = ? WHERE scope = ? AND target_id = ? AND updated_at = ?"
        " AND (warned IS NULL OR (warned = 'soft' AND ? = 'hard'))",
        (level, scope, target_id, updated_at, level),
    ) as cur:
        return cur.rowcount == 1


# subscription windows


async def record_windows(
    tx: Tx, execution_id: str, runtime: str, windows: tuple[RateWindow, ...], at: str
) -> None:
    """The latest windows `runtime` reported, for the owner of `execution_id` (one row per
    owner, runtime and window: a newer report replaces it)."""
    for w in windows:
        await tx.execute(
            "INSERT INTO rate_windows (owner_uid, runtime, name, used_percent, window_minutes,"
            " resets_at, execution_id, observed_at)"
            " SELECT owner_uid, ?, ?, ?, ?, ?, id, ? FROM executions WHERE id = ?"
            " ON CONFLICT (owner_uid, runtime, name) DO UPDATE SET"
            " used_percent = excluded.used_percent, window_minutes = excluded.window_minutes,"
            " resets_at = excluded.resets_at, execution_id = excluded.execution_id,"
            " observed_at = excluded.observed_at"
            # a window that resets earlier is an older one (an old rollout read again)
            " WHERE excluded.resets_at IS NULL OR rate_windows.resets_at IS NULL"
            " OR excluded.resets_at >= rate_windows.resets_at",
            (runtime, w.name, w.used_percent, w.window_minutes, w.resets_at, at, execution_id),
        )


async def windows_of(store: Store | Tx, owner_uid: int) -> dict[str, list[RateWindow]]:
    """The owner's latest windows, by runtime."""
    sql = (
        "SELECT runtime, name, used_percent, window_minutes, resets_at FROM rate_windows"
        " WHERE owner_uid = ? ORDER BY runtime, name LIMIT 100"
    )
    if isinstance(store, Store):
        rows = await store.fetchall(sql, (owner_uid,))
    else:
        async with store.execute(sql, (owner_uid,)) as cur:
            rows = list(await cur.fetchall())
    found: dict[str, list[RateWindow]] = {}
    for row in rows:
        found.setdefault(row["runtime"], []).append(
            RateWindow(
                name=row["name"],
                used_percent=row["used_percent"],
                window_minutes=row["window_minutes"],
                resets_at=row["resets_at"],
            )
        )
    return found


def with_window(
    budget: StoredBudget, windows: dict[str, list[RateWindow]], runtime: str | None, now: float
) -> StoredBudget:
    """The budget with its window spend: the fullest current window of `runtime` (of any
    runtime when None: `alp ps`), or not reported."""
    chosen = [w for name, ws in windows.items() if runtime in (None, name) for w in ws]
    spend = replace_spend(budget.spend, fullest(chosen, now))
    return replace(budget, spend=spend)


def replace_spend(spend: Spend, window_percent: float | None) -> Spend:
    return Spend(cost_usd=spend.cost_usd, tokens=spend.tokens, window_percent=window_percent)
