"""Benchmarks that compare alp against its floor measured in the same run.

Every module `bench/bench_*.py` exposes `run() -> list[Result]`; `python -m bench` runs them
all and prints one table. A figure without its floor means little on a shared 2-vCPU VM
(sequential round trips there are bimodal), so each Result carries the
baseline measured in the same run, interleaved with it, and the ratio between the two.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

__all__ = ["Result", "goal_met"]

_COMPARE = {">=": operator.ge, "<=": operator.le, "<": operator.lt, ">": operator.gt}


@dataclass(frozen=True, slots=True)
class Result:
    """One measured figure against its floor.

    `ratio` is figure/baseline in the direction the goal states; `goal` is ">= X" or "<= X"
    on the ratio, "<= X UNIT" on the figure itself (an absolute bound such as a memory
    budget), or "" for a figure printed for information only.
    """

    name: str
    figure: float
    unit: str
    baseline: float | None
    ratio: float | None
    goal: str


def goal_met(result: Result) -> bool | None:
    """True/False when the result has a goal and what it bounds, else None."""
    if not result.goal:
        return None
    op, _, rest = result.goal.partition(" ")
    bound, _, unit = rest.partition(" ")
    value = result.figure if unit else result.ratio
    if value is None:
        return None
    return bool(_COMPARE[op](value, float(bound)))
