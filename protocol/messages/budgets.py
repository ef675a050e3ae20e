"""`thread/budget` and the `budget/warning` notification: budgets of a thread or a schedule
(cumulative over their roots), in USD or tokens, with a soft limit that warns and a hard
limit that ends the running root and refuses the next (docs/budgets.md)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from protocol.messages.base import BudgetTokens, Wire

BudgetScope = Literal["thread", "schedule"]
#: `ok` under both limits, `soft` at or past the soft one, `hard` at or past the hard one
BudgetLevel = Literal["ok", "soft", "hard"]
#: a budget in USD (a thread's or a schedule's, over all its roots)
BudgetAmount = Annotated[float, msgspec.Meta(gt=0, le=1_000_000)]
#: how full (percent) the runtime's subscription window may get
WindowShare = Annotated[float, msgspec.Meta(gt=0, le=100)]


class RateWindow(Wire):
    """A subscription window as the runtime last reported it (Codex's rate limits)."""

    runtime: str
    #: `primary` (Codex: the 5-hour window) or `secondary` (the weekly one)
    name: Literal["primary", "secondary"]
    used_percent: float
    window_minutes: int | None = None
    #: epoch seconds
    resets_at: int | None = None


class Budget(Wire):
    """A budget and what was spent against it so far."""

    scope: BudgetScope
    target_id: str
    level: BudgetLevel = "ok"
    usd: float | None = None
    soft_usd: float | None = None
    tokens: int | None = None
    soft_tokens: int | None = None
    #: USD over every execution of the thread (or fired by the schedule), children included
    spent_usd: float = 0.0
    spent_tokens: int = 0
    updated_at: str | None = None
    #: the share of the runtime's subscription window the work may fill (percent)
    window_percent: float | None = None
    soft_window_percent: float | None = None
    #: how full the window is (the fullest current one the runtimes reported); None: not
    #: reported (Claude Code, an API key), and then the window limit does not apply
    window_used_percent: float | None = None


class ThreadBudgetParams(Wire):
    """Set (any of the limits), clear (`clear`), or read (nothing else given) a thread's
    budget. A soft limit must be below its hard one."""

    thread_id: str
    usd: BudgetAmount | None = None
    soft_usd: BudgetAmount | None = None
    tokens: BudgetTokens | None = None
    soft_tokens: BudgetTokens | None = None
    window_percent: WindowShare | None = None
    soft_window_percent: WindowShare | None = None
    clear: bool = False


class ThreadBudgetResult(Wire):
    #: None: the thread has no budget
    budget: Budget | None = None


class BudgetWarning(Wire):
    """A budget reached its soft limit (once per budget, until it is set again), or its hard
    limit (the running root is being ended; further roots are refused)."""

    budget: Budget
    thread_id: str
    message: str
    execution_id: str | None = None
    thread_title: str | None = None


__all__ = [
    "Budget",
    "BudgetAmount",
    "BudgetLevel",
    "BudgetScope",
    "BudgetWarning",
    "RateWindow",
    "ThreadBudgetParams",
    "ThreadBudgetResult",
    "WindowShare",
]
