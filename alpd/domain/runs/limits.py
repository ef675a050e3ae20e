"""Guard rails of one run: how long it may take and how much it may cost.

An agent sets them in config.toml (`[agents.NAME] timeout = "30m"`, `budget_usd = 5.0`); a
continue or a schedule may set either for its own runs (`--timeout`, `--budget-usd`), which
then replaces the agent's. The result is written into the run's policy (`timeoutSeconds`,
`budgetUsd`), so the hash covers it and nothing edits it afterwards.

A run over its time is ended and settles `timed-out`; a run whose cost (what the history
sync reads from its transcript while it runs) reaches its budget is ended and settles
`budget-exceeded`. Both are the daemon's verdicts, like `cancelled`: the exit status the
ended process leaves says nothing more.

Pure: the clock and the cost are parameters.
"""

from __future__ import annotations

import re
from typing import Final, Literal

import msgspec

#: `30s`, `5m`, `2h`, `1d`, sums such as `1h30m`, or a bare number of seconds
_DURATION: Final = re.compile(r"(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s?)?")
#: the longest time limit taken (a week): past that, leave it unset
TIMEOUT_MAX_SECONDS: Final = 7 * 24 * 3600
#: the largest cost cap taken, in USD
BUDGET_MAX_USD: Final = 1_000_000.0
#: the largest token cap taken
BUDGET_MAX_TOKENS: Final = 1_000_000_000_000

LimitOutcome = Literal["timed-out", "budget-exceeded"]


class RunLimits(msgspec.Struct, frozen=True, kw_only=True):
    """A run's time limit (seconds) and cost cap (USD); None: no limit."""

    timeout_seconds: int | None = None
    budget_usd: float | None = None
    #: a cap in tokens (input + output + cache, as `alp ps` counts them)
    budget_tokens: int | None = None


def parse_timeout(text: str) -> int:
    """Seconds of `30m`, `90s`, `1h30m`, `2d` or `45`; ValueError saying what is wanted."""
    cleaned = text.strip().lower()
    match = _DURATION.fullmatch(cleaned)
    if not cleaned or match is None or not any(match.groups()):
        raise ValueError(f"{text!r} is not a duration: use e.g. 90s, 30m, 2h or 1h30m")
    days, hours, minutes, seconds = (int(g) if g else 0 for g in match.groups())
    total = ((days * 24 + hours) * 60 + minutes) * 60 + seconds
    return check_timeout(total)


def check_timeout(seconds: int) -> int:
    if not 1 <= seconds <= TIMEOUT_MAX_SECONDS:
        raise ValueError(f"a time limit is between 1 s and {TIMEOUT_MAX_SECONDS // 86400} days")
    return seconds


def check_budget(usd: float) -> float:
    if not 0 < usd <= BUDGET_MAX_USD:
        raise ValueError(f"a cost cap is more than 0 and at most {BUDGET_MAX_USD:g} USD")
    return float(usd)


def effective_limits(agent: RunLimits, asked: RunLimits) -> RunLimits:
    """What the run gets: each limit the request sets, else the agent's."""
    return RunLimits(
        timeout_seconds=asked.timeout_seconds
        if asked.timeout_seconds is not None
        else agent.timeout_seconds,
        budget_usd=asked.budget_usd if asked.budget_usd is not None else agent.budget_usd,
        budget_tokens=asked.budget_tokens
        if asked.budget_tokens is not None
        else agent.budget_tokens,
    )


def check_tokens(tokens: int) -> int:
    if not 0 < tokens <= BUDGET_MAX_TOKENS:
        raise ValueError(f"a token cap is more than 0 and at most {BUDGET_MAX_TOKENS:,}")
    return int(tokens)


def limit_hit(
    limits: RunLimits, *, running_seconds: float, cost_usd: float | None, tokens: int = 0
) -> LimitOutcome | None:
    """The limit a run has reached, if any: its time first (it is what ends it for sure)."""
    if limits.timeout_seconds is not None and running_seconds >= limits.timeout_seconds:
        return "timed-out"
    if limits.budget_usd is not None and cost_usd is not None and cost_usd >= limits.budget_usd:
        return "budget-exceeded"
    if limits.budget_tokens is not None and tokens >= limits.budget_tokens:
        return "budget-exceeded"
    return None


__all__ = [
    "BUDGET_MAX_TOKENS",
    "BUDGET_MAX_USD",
    "TIMEOUT_MAX_SECONDS",
    "LimitOutcome",
    "RunLimits",
    "check_budget",
    "check_timeout",
    "check_tokens",
    "effective_limits",
    "limit_hit",
    "parse_timeout",
]
