"""`schedule/create|list|show|pause|resume|delete|run` and `schedule/changed`."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from protocol.messages.base import (
    SCHEDULE_PROMPT_MAX_BYTES,
    BudgetTokens,
    BudgetUsd,
    Text,
    TimeoutSeconds,
    Wire,
    byte_capped,
)
from protocol.messages.budgets import BudgetAmount
from protocol.messages.delivery import Destinations
from protocol.messages.executions import Execution

CatchUp = Literal["one", "none"]
ScheduleStatus = Literal["active", "paused", "stopped", "done"]
#: a cron expression, a duration, an ISO time or an IANA zone name: one short line
RuleText = Annotated[str, msgspec.Meta(max_length=256)]
#: a row count a listing returns at most
ListLimit = Annotated[int, msgspec.Meta(ge=1, le=1000)]


class ScheduleCreateParams(Wire):
    """Exactly one of `cron`, `every`, `at`. `timezone` (IANA) reads a cron expression and an
    `at` without an offset on that zone's wall clock (default UTC; `alp` sends its own)."""

    thread_id: str
    prompt: Annotated[Text, byte_capped(SCHEDULE_PROMPT_MAX_BYTES, "what each run is asked")]
    cron: RuleText | None = None
    every: RuleText | None = None
    at: RuleText | None = None
    timezone: RuleText = "UTC"
    agent: str | None = None
    runtime: str | None = None
    notify: bool = False
    #: fires missed while alpd was down: `one` coalesces them into one run, `none` skips them
    catch_up: CatchUp = "one"
    #: each fired root's time limit and cost cap, over the agent's (`timed-out`,
    #: `budget-exceeded`); unset: the agent's
    timeout_seconds: TimeoutSeconds | None = None
    budget_usd: BudgetUsd | None = None
    #: the schedule's budget over all its runs (docs/budgets.md): at `total_usd` (or
    #: `total_tokens`) the running fire is ended `budget-exceeded` and no further fire runs
    #: (BUDGET_EXCEEDED); `soft_usd` warns every door once
    total_usd: BudgetAmount | None = None
    soft_usd: BudgetAmount | None = None
    total_tokens: BudgetTokens | None = None
    #: where each run's report goes besides this thread (unset: every paired chat)
    to: Destinations | None = None


class Schedule(Wire):
    id: str
    thread_id: str
    #: `cron 0 3 * * * (Europe/Berlin)`, `every 2h`, `at 2026-12-01T02:00:00+00:00`
    rule: str
    prompt: str
    timezone: str
    status: ScheduleStatus
    catch_up: CatchUp
    notify: bool
    created_at: str
    updated_at: str
    thread_title: str | None = None
    cron: str | None = None
    every: str | None = None
    at: str | None = None
    agent: str | None = None
    runtime: str | None = None
    #: where its reports go besides its thread, resolved (`thread:ID`); None: every paired chat
    report_to: list[str] | None = None
    #: why a schedule stopped (its thread was closed …)
    stop_reason: str | None = None
    next_fire_at: str | None = None
    last_fire_at: str | None = None
    last_execution_id: str | None = None
    #: outcome of the last run (`running` while it runs)
    last_result: str | None = None
    #: a fire waiting for its busy thread (one at most)
    queued_fire_at: str | None = None
    #: runs started, and due fires that got no run of their own (coalesced or skipped)
    runs: int = 0
    missed: int = 0
    #: USD over all its runs, as the runtimes reported or the config's prices gave
    cost_usd: float | None = None
    #: each fired root's limits, when the schedule sets its own (else the agent's)
    timeout_seconds: int | None = None
    budget_usd: float | None = None
    #: a schedule alp made itself: `usage-limit` (the thread's wake when its runtime's usage
    #: limit resets, docs/budgets.md), and the run it follows
    reason: str | None = None
    wake_of: str | None = None


class ScheduleRef(Wire):
    schedule_id: str


class ScheduleListParams(Wire):
    thread_id: str | None = None


class ScheduleListResult(Wire):
    schedules: list[Schedule]


class ScheduleRunResult(Wire):
    schedule: Schedule
    #: `started`: a root opened; `queued`: the thread is busy, it runs when it settles
    status: Literal["started", "queued"]
    execution: Execution | None = None


class ScheduleChanged(Wire):
    schedule: Schedule
    change: str


__all__ = [
    "CatchUp",
    "ListLimit",
    "RuleText",
    "Schedule",
    "ScheduleChanged",
    "ScheduleCreateParams",
    "ScheduleListParams",
    "ScheduleListResult",
    "ScheduleRef",
    "ScheduleRunResult",
    "ScheduleStatus",
]
