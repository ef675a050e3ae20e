"""Reads on the event loop's own thread (`Store.read_inline`): no hop, a budget.

A read through the reader connection (`Store.read`) is a hop to its thread and back: two
thread wake-ups, 0.1 ms on an idle machine and 0.3 to 2 ms on a loaded one
(bench/bench_transcript.py) — as much as a small read's statements. `InlineReader` runs such
a read at once on a query-only connection of its own, opened on the loop's thread at its
first use. It holds the loop while it runs, so its statements get a budget: past it SQLite
is interrupted (a progress handler looks at the clock every `STEPS` VM steps), and the
caller does the work again through the reader's thread — as on any other SQLite error here
(a locked database is not waited for on the loop: no busy timeout).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final, TypeVar

__all__ = ["BUDGET", "InlineReader"]

T = TypeVar("T")

#: how long an inline read's statements may hold the event loop (seconds of SQLite's steps)
BUDGET: Final = 0.005
#: SQLite VM steps between two looks at the budget (a look is one Python call: ~0.1 µs)
STEPS: Final = 2000


class InlineReader:
    """One query-only connection used on the event loop's thread only."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = None
        self._deadline = 0.0
        #: the last read was interrupted by its budget
        self.interrupted = False

    def run(self, work: Callable[[sqlite3.Connection], T], budget: float) -> T:
        """`work(connection)` now; sqlite3.OperationalError when SQLite refused it or its
        budget ran out (`interrupted` says which)."""
        conn = self._conn
        if conn is None:
            conn = self._conn = self._connect()
        self._deadline = time.monotonic() + budget
        self.interrupted = False
        return work(conn)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA query_only = ON")
        conn.execute("PRAGMA busy_timeout = 0")
        conn.set_progress_handler(self._over_budget, STEPS)
        return conn

    def _over_budget(self) -> int:
        if time.monotonic() > self._deadline:
            self.interrupted = True
            return 1
        return 0
