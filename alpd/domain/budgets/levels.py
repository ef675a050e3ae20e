"""A budget's limits, the level a spend reaches, and the forecast at the current burn rate.

A budget belongs to a thread or a schedule and counts every execution of it (its roots and
what they delegated), for ever: raising a budget gives room, lowering it below the spend
refuses the next root at once. Each limit is in USD, tokens, a share of the runtime's
subscription window (`window_percent`: how full the window may get, where the runtime reports
it — `alpd.domain.budgets.windows`), or several; a soft limit warns
(once per budget until it is set again), a hard one ends the running root
(`budget-exceeded`) and refuses the next (BUDGET_EXCEEDED).

Pure: the spend and the times are parameters.
"""

from __future__ import annotations

from typing import Literal

import msgspec

Level = Literal["ok", "soft", "hard"]
_ORDER: dict[Level, int] = {"ok": 0, "soft": 1, "hard": 2}


class Limits(msgspec.Struct, frozen=True, kw_only=True):
    """A budget's limits; None: not set."""

    usd: float | None = None
    soft_usd: float | None = None
    tokens: int | None = None
    soft_tokens: int | None = None
    #: how full (percent) the runtime's subscription window may get
    window_percent: float | None = None
    soft_window_percent: float | None = None

    @property
    def empty(self) -> bool:
        return all(
            v is None
            for v in (
                self.usd,
                self.soft_usd,
                self.tokens,
                self.soft_tokens,
                self.window_percent,
                self.soft_window_percent,
            )
        )

    @property
    def hard(self) -> bool:
        """A hard limit is set: a running root under it is ended when it is reached, so its
        spend is read as it happens (the history sync hurries while one runs)."""
        return any(v is not None for v in (self.usd, self.tokens, self.window_percent))


class Spend(msgspec.Struct, frozen=True, kw_only=True):
    cost_usd: float = 0.0
    tokens: int = 0
    #: how full the runtime's subscription window is (percent); None: not reported, and then
    #: a window limit is never reached
    window_percent: float | None = None


def check_limits(limits: Limits) -> Limits:
    """The limits as given, or ValueError saying what is wrong: a soft limit needs its hard
    one (of the same unit) and must be below it."""
    pairs = (
        ("usd", limits.usd, limits.soft_usd),
        ("tokens", limits.tokens, limits.soft_tokens),
        ("window percent", limits.window_percent, limits.soft_window_percent),
    )
    for share in (limits.window_percent, limits.soft_window_percent):
        if share is not None and not 0 < share <= 100:
            raise ValueError(f"a window share is a percent over 0 and up to 100, not {share:g}")
    for unit, hard, soft in pairs:
        if soft is None:
            continue
        if hard is None:
            raise ValueError(f"a soft {unit} limit needs a hard one (give both)")
        if soft >= hard:
            raise ValueError(
                f"the soft {unit} limit ({soft:g}) must be below the hard one ({hard:g})"
            )
    if limits.empty:
        raise ValueError(
            "give at least one limit (USD, tokens or a window percent), or clear the budget"
        )
    return limits


def level(limits: Limits, spend: Spend) -> Level:
    """How far the spend is: `hard` at or past a hard limit, else `soft` at or past a soft
    one, else `ok`."""
    window = spend.window_percent
    if (
        (limits.usd is not None and spend.cost_usd >= limits.usd)
        or (limits.tokens is not None and spend.tokens >= limits.tokens)
        or (limits.window_percent is not None and window is not None
            and window >= limits.window_percent)
    ):  # fmt: skip
        return "hard"
    if (
        (limits.soft_usd is not None and spend.cost_usd >= limits.soft_usd)
        or (limits.soft_tokens is not None and spend.tokens >= limits.soft_tokens)
        or (limits.soft_window_percent is not None and window is not None
            and window >= limits.soft_window_percent)
    ):  # fmt: skip
        return "soft"
    return "ok"


def worse(a: Level, b: Level) -> Level:
    return a if _ORDER[a] >= _ORDER[b] else b


def describe(scope: str, limits: Limits, spend: Spend) -> str:
    """`thread budget: 4.20 of 5.00 USD (soft 4.00)`, with tokens when limited in them."""
    parts: list[str] = []
    if limits.usd is not None or limits.soft_usd is not None:
        soft = f" (soft {limits.soft_usd:.2f})" if limits.soft_usd is not None else ""
        parts.append(f"{spend.cost_usd:.2f} of {limits.usd:.2f} USD{soft}")
    if limits.tokens is not None or limits.soft_tokens is not None:
        soft = f" (soft {limits.soft_tokens:,})" if limits.soft_tokens is not None else ""
        parts.append(f"{spend.tokens:,} of {limits.tokens:,} tokens{soft}")
    if limits.window_percent is not None or limits.soft_window_percent is not None:
        soft = (
            f" (soft {limits.soft_window_percent:g}%)"
            if limits.soft_window_percent is not None
            else ""
        )
        used = "not reported" if spend.window_percent is None else f"{spend.window_percent:g}%"
        parts.append(f"subscription window {used} of {limits.window_percent:g}%{soft}")
    return f"{scope} budget: " + ", ".join(parts)


def burn_per_hour(cost_usd: float | None, running_seconds: float) -> float | None:
    """USD an hour at the rate so far; None before a minute's worth of run or without cost."""
    if cost_usd is None or running_seconds < 1.0:
        return None
    return cost_usd * 3600.0 / running_seconds


def forecast(
    cost_usd: float | None, running_seconds: float, remaining_seconds: float | None
) -> float | None:
    """What the run will have cost when its time limit ends it, at its burn rate so far:
    cost + rate × remaining time. None without a time limit or a cost yet."""
    rate = burn_per_hour(cost_usd, running_seconds)
    if rate is None or cost_usd is None or remaining_seconds is None:
        return None
    return cost_usd + rate * max(remaining_seconds, 0.0) / 3600.0


__all__ = [
    "Level",
    "Limits",
    "Spend",
    "burn_per_hour",
    "check_limits",
    "describe",
    "forecast",
    "level",
    "worse",
]
