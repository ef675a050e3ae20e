"""`daemon/ps` (what runs now, what waits, schedules, services) and `activity/list` (what
ran)."""

from __future__ import annotations

from typing import Annotated, get_args

import msgspec

from protocol.messages.base import ExecutionStatus, Kind, Outcome, Wire, documented
from protocol.messages.budgets import Budget, RateWindow
from protocol.messages.checkpoints import CheckpointsState
from protocol.messages.daemon import TaskState
from protocol.messages.executions import Origin, Usage
from protocol.messages.history import MeaningIndexState
from protocol.messages.schedules import ListLimit, RuleText, ScheduleStatus
from protocol.messages.thread_show import RecapState


class PsParams(Wire):
    #: include `temp` work, hidden by default
    all: bool = False


class PsJob(Wire):
    """A running root or delegated child."""

    execution_id: str
    root_id: str
    kind: Kind
    origin: Origin
    runtime: str
    agent: str
    status: ExecutionStatus
    created_at: str
    elapsed_seconds: float
    thread_id: str | None = None
    thread_title: str | None = None
    parent_id: str | None = None
    #: the name of the host that runs it (several alpd on one database)
    host: str | None = None
    pid: int | None = None
    started_at: str | None = None
    usage: Usage | None = None
    #: input + output + cache tokens so far
    tokens: int = 0
    cost_usd: float | None = None
    #: USD an hour at the rate so far (cost / elapsed)
    burn_usd_per_hour: float | None = None
    #: what it will have cost when its time limit ends it, at that rate (with a time limit)
    forecast_usd: float | None = None
    #: its time limit (policy `timeoutSeconds`), if any
    timeout_seconds: int | None = None


class PsDelivery(Wire):
    """A delivery waiting for its thread's running root: its hook (`route` inject) or its
    settle (`route` queue)."""

    id: int
    thread_id: str
    kind: Annotated[str, documented(enum=list(get_args(Kind)))]
    source: str
    queued_at: str
    thread_title: str | None = None
    route: str | None = None


class PsSchedule(Wire):
    """A schedule as `ps` shows it (`schedule/show` has the rest)."""

    id: str
    thread_id: str
    rule: str
    status: ScheduleStatus
    thread_title: str | None = None
    next_fire_at: str | None = None
    last_execution_id: str | None = None
    last_result: str | None = None
    queued_fire_at: str | None = None
    runs: int = 0
    missed: int = 0
    cost_usd: float | None = None
    #: `usage-limit`: the thread's wake when its runtime's usage limit resets
    reason: str | None = None


class PsLeftover(Wire):
    """A process a run left behind: still alive after its execution settled (found by the
    `ALP_EXECUTION_ID` label it inherited)."""

    execution_id: str
    pid: int
    #: the process's name and arguments, cut to 200 characters
    command: str
    thread_id: str | None = None
    settled_at: str | None = None
    outcome: Outcome | None = None


class PsDaemon(Wire):
    pid: int
    version: str
    uptime_seconds: float
    rss_bytes: int


class PsResult(Wire):
    daemon: PsDaemon
    jobs: list[PsJob]
    queued: list[PsDelivery]
    #: active and paused schedules
    schedules: list[PsSchedule]
    services: list[TaskState]
    #: `temp` jobs left out (ask with `all`)
    hidden: int = 0
    #: USD of the running jobs so far
    cost_usd: float = 0.0
    #: whether thread recaps are refreshed (and why not)
    recap: RecapState | None = None
    #: processes of settled runs that are still alive
    leftovers: list[PsLeftover] = msgspec.field(default_factory=list)
    #: the meaning index: off (and why), building (n of N, rate), stale, ready
    search: MeaningIndexState | None = None
    #: the file checkpoints: their size on disk, workspaces, entries, caps
    checkpoints: CheckpointsState | None = None
    #: the budgets of threads and schedules, with what was spent against each
    budgets: list[Budget] = msgspec.field(default_factory=list)
    #: the subscription windows the runtimes last reported (Codex's rate limits), not reset
    windows: list[RateWindow] = msgspec.field(default_factory=list)


class ActivityParams(Wire):
    #: ISO 8601; only what was created at or after it
    since: RuleText | None = None
    thread_id: str | None = None
    kind: Kind | None = None
    limit: ListLimit = 200


class ActivityItem(Wire):
    execution_id: str
    kind: Kind
    origin: Origin
    runtime: str
    agent: str
    status: ExecutionStatus
    created_at: str
    thread_id: str | None = None
    thread_title: str | None = None
    sequence: int | None = None
    outcome: Outcome | None = None
    started_at: str | None = None
    settled_at: str | None = None
    duration_seconds: float | None = None
    usage: Usage | None = None
    cost_usd: float | None = None
    #: the run's report: its final message (a non-interactive root), else its summary
    report: str | None = None
    #: when it happened, the moment the list is ordered by: `created_at`, but for an imported
    #: session its transcript's first entry (the import is not when it ran)
    at: str | None = None
    #: a native session indexed by `alp import` (or adopted): its cost is not in the total
    imported: bool = False


class ActivityResult(Wire):
    items: list[ActivityItem]
    #: USD of the listed runs alp ran (imported sessions are left out: `imported_cost_usd`)
    cost_usd: float = 0.0
    #: USD the listed imported sessions reported, not counted in `cost_usd`
    imported_cost_usd: float = 0.0


__all__ = [
    "ActivityItem",
    "ActivityParams",
    "ActivityResult",
    "PsDaemon",
    "PsDelivery",
    "PsJob",
    "PsLeftover",
    "PsParams",
    "PsResult",
    "PsSchedule",
]
