"""The history sync worker: one task of the daemon's task group.

It wakes when a settle queues an execution (`HistoryService.after_settle`) and otherwise
every `interval` seconds (every `LIVE_INTERVAL` while someone reads a running root live, or
while `hurry` says so: a running root held by a budget, whose spend must be read soon),
and runs `HistoryService.tick`: queued executions, every running execution with a
transcript (so a long run's entries are searchable before it settles), settled executions
whose first sync a crash interrupted, and stale thread documents. A failing pass is logged
and reported in `daemon/status`, never fatal.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
import structlog

from alpd.services.history.sync import HistoryService
from protocol import messages as m

__all__ = ["DEFAULT_INTERVAL", "run_history_sync"]

DEFAULT_INTERVAL = 1.0
#: the pause between passes while a running root's transcript is read live (a new line
#: reaches the reader in about half of this plus the pass, instead of half a second)
LIVE_INTERVAL = 0.25

log = structlog.get_logger("alpd.history")


async def run_history_sync(
    history: HistoryService,
    report: Callable[[m.TaskState], None],
    now: Callable[[], str],
    interval: float = DEFAULT_INTERVAL,
    copied: Callable[[], None] = lambda: None,
    hurry: Callable[[], bool] = lambda: False,
) -> None:
    """`copied` is called after a pass that copied entries (the meaning index and the
    budgets wake)."""
    total = 0
    while True:
        with anyio.move_on_after(
            min(interval, LIVE_INTERVAL) if history.watched_live() or hurry() else interval
        ):
            await history.wakeup.wait()
        history.wakeup = anyio.Event()
        try:
            added = await history.tick()
            total += added
            if added:
                copied()
            report(
                m.TaskState(
                    name="history-sync",
                    state="idle",
                    last_run_at=now(),
                    detail=f"{total} entries copied since start",
                )
            )
        except Exception:
            log.exception("history_tick_failed")
            report(m.TaskState(name="history-sync", state="failing", last_run_at=now()))
