"""How an ended process settles a run."""

from __future__ import annotations

from typing import Literal

OutcomeStatus = Literal[
    "completed", "failed", "cancelled", "interrupted", "timed-out", "budget-exceeded"
]
#: the outcomes alpd gives a run it ended itself: a cancel, or a guard rail reached
EndedAs = Literal["cancelled", "timed-out", "budget-exceeded"]


def outcome_of(exit_code: int | None, *, ended_as: EndedAs | None) -> OutcomeStatus:
    """Ended by us → what we ended it for (`cancelled`, `timed-out`, `budget-exceeded`);
    exit 0 → completed; ended by a signal nobody here sent (kill -9, OOM, a closed terminal;
    a shell reports those as 128+N) or with no status at all → interrupted; any other exit →
    failed."""
    if ended_as is not None:
        return ended_as
    if exit_code is None or exit_code < 0 or 128 < exit_code <= 128 + 64:
        return "interrupted"
    return "completed" if exit_code == 0 else "failed"
