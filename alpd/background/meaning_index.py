"""The meaning index builder: one task of the daemon's task group (docs/search.md).

It runs `MeaningIndex.step` while there is work, sleeping after each step as long as its
embedding took (so building uses at most about half of one core, and the rest of alpd —
requests, the history sync — keeps its share of the interpreter), and otherwise waits for
new history (`MeaningIndex.wakeup`, set by the history sync when it copied entries) or
`interval` seconds. A failing step is logged and reported in `daemon/status`, never fatal.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
import structlog

from alpd.services.history.meaning import MeaningIndex
from protocol import messages as m

__all__ = ["DEFAULT_INTERVAL", "run_meaning_index"]

DEFAULT_INTERVAL = 2.0

log = structlog.get_logger("alpd.search")


async def run_meaning_index(
    index: MeaningIndex,
    report: Callable[[m.TaskState], None],
    now: Callable[[], str],
    interval: float = DEFAULT_INTERVAL,
) -> None:
    while True:
        try:
            more, took = await index.step()
            state = index.state()
            detail: str = state.state
            if state.state in ("building", "stale"):
                detail += f" ({state.embedded} of {state.total})"
            report(
                m.TaskState(name="meaning-index", state="idle", last_run_at=now(), detail=detail)
            )
        except Exception as exc:
            log.exception("meaning_index_step_failed")
            report(
                m.TaskState(
                    name="meaning-index",
                    state="failing",
                    last_run_at=now(),
                    last_error=f"{type(exc).__name__}: {exc}"[:300],
                )
            )
            more, took = False, 0.0
        if more:
            await anyio.sleep(took)
            continue
        with anyio.move_on_after(interval):
            await index.wakeup.wait()
        index.wakeup = anyio.Event()
