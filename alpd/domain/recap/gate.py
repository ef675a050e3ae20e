"""When a thread's recap is refreshed: gating, single flight, back-off. Pure; time is a
parameter.

Gating (`refresh_verdict`), in this order:

1. nothing new since the last refresh (no history entry a recap may read) → `skip`;
2. fewer than `minRoots` roots and fewer than `minEntries` entries since it → `skip` (a
   thread must accumulate real activity before it costs anything); both count only what a
   recap may read, so a cleared or undone root is no activity;
3. the last refresh less than `minIntervalSeconds` ago, or the back-off after failures not
   over → `later`, at the time it will be (the service sets one timer per thread);
4. otherwise → `refresh`.

The gate is not told what asked: a settled root, a clear or undo, and the thread's timer get
the same verdict for the same activity, so none of them skips the interval or the back-off.

Back-off (`backoff_seconds`): after the n-th failure in a row, `backoffSeconds · 2^(n-1)`,
at most `maxBackoffSeconds`; a success resets the count.

Single flight (`Flight`): one refresh per thread at a time. A trigger while a refresh runs
leaves one follow-up, however many arrive; when the refresh ends, the follow-up (if any)
runs once, through the gate again — so it costs a model call only if something new
arrived meanwhile.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Literal

from alpd.domain.recap.config import RecapSettings


@dataclass(frozen=True, slots=True)
class Activity:
    """What happened in a thread since its last refresh (or ever, before the first)."""

    #: entries a recap may read, and the roots they belong to
    new_entries: int
    new_roots: int
    last_refresh_at: datetime | None = None
    failures: int = 0
    last_failure_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Verdict:
    action: Literal["refresh", "skip", "later"]
    reason: str
    at: datetime | None = None


def backoff_seconds(failures: int, settings: RecapSettings) -> float:
    """How long to wait after `failures` failed refreshes in a row (0 for none)."""
    if failures <= 0:
        return 0.0
    doubled = settings.backoff_seconds * 2.0 ** min(failures - 1, 32)
    return min(doubled, settings.max_backoff_seconds)


def refresh_verdict(activity: Activity, settings: RecapSettings, now: datetime) -> Verdict:
    """Whether to refresh now (module docstring, rules 1–4)."""
    if activity.new_entries <= 0:
        return Verdict("skip", "nothing new since the last recap")
    if activity.new_roots < settings.min_roots and activity.new_entries < settings.min_entries:
        return Verdict(
            "skip",
            f"{activity.new_roots} root(s) and {activity.new_entries} entries since the last "
            f"recap; it waits for {settings.min_roots} roots or {settings.min_entries} entries",
        )
    waits: list[datetime] = []
    if activity.last_refresh_at is not None:
        waits.append(activity.last_refresh_at + timedelta(seconds=settings.min_interval_seconds))
    if activity.failures and activity.last_failure_at is not None:
        pause = backoff_seconds(activity.failures, settings)
        waits.append(activity.last_failure_at + timedelta(seconds=pause))
    due = max(waits, default=now)
    if due > now:
        return Verdict("later", "too soon after the last refresh or failure", at=due)
    return Verdict("refresh", "enough activity since the last recap")


@dataclass(frozen=True, slots=True)
class Flight:
    """One thread's refresh slot: running, and whether a follow-up is owed."""

    running: bool = False
    follow_up: bool = False


def on_trigger(flight: Flight) -> tuple[Flight, Literal["start", "follow-up", "ignored"]]:
    """A trigger arrives: start a refresh, or note one follow-up, or (one is noted) nothing."""
    if not flight.running:
        return Flight(running=True), "start"
    if not flight.follow_up:
        return replace(flight, follow_up=True), "follow-up"
    return flight, "ignored"


def on_finish(flight: Flight) -> tuple[Flight, bool]:
    """A refresh ended: (the new state, whether to run the owed follow-up now)."""
    if flight.follow_up:
        return Flight(running=True), True
    return Flight(), False


__all__ = [
    "Activity",
    "Flight",
    "Verdict",
    "backoff_seconds",
    "on_finish",
    "on_trigger",
    "refresh_verdict",
]
