"""`Store.read_inline`: a small read on the event loop's own thread, with no hop. It sees
every committed write; statements that outlast their budget are interrupted and the work is
done again on the reader's thread, as it is on any SQLite error there; the connection is
query-only."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import anyio
import pytest

from alpd.store.db import Store


def _sinces(conn: sqlite3.Connection) -> tuple[list[int], str]:
    rows = conn.execute("SELECT since FROM history_digests ORDER BY since").fetchall()
    return [int(r[0]) for r in rows], threading.current_thread().name


def _add(since: int) -> object:
    def unit(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO history_digests (since) VALUES (?)", (since,))

    return unit


def test_an_inline_read_runs_on_the_loops_thread_and_sees_each_commit(tmp_path: Path) -> None:
    async def main() -> list[tuple[list[int], str]]:
        store = await Store.open(tmp_path / "alp.db")
        try:
            seen = [await store.read_inline(_sinces)]
            await store.write_blocking(_add(7))  # type: ignore[arg-type]
            seen.append(await store.read_inline(_sinces))
            await store.write_blocking(_add(8))  # type: ignore[arg-type]
            seen.append(await store.read_inline(_sinces))
            return seen
        finally:
            await store.close()

    loop_thread = threading.current_thread().name
    assert anyio.run(main) == [
        ([1], loop_thread),
        ([1, 7], loop_thread),
        ([1, 7, 8], loop_thread),
    ]


# A statement of ~10^6 steps: past any budget of a few microseconds, quick on a thread.
_LONG = (
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300000) "
    "SELECT count(*) FROM n"
)


def _long(conn: sqlite3.Connection) -> tuple[int, str]:
    return int(conn.execute(_LONG).fetchone()[0]), threading.current_thread().name


def test_statements_past_their_budget_are_done_again_on_the_readers_thread(
    tmp_path: Path,
) -> None:
    async def main() -> tuple[tuple[int, str], tuple[int, str], tuple[list[int], str]]:
        store = await Store.open(tmp_path / "alp.db")
        try:
            over = await store.read_inline(_long, budget=0.000_001)
            within = await store.read_inline(_long, budget=60.0)
            # the connection is still good for the next read, within its budget
            after = await store.read_inline(_sinces)
            return over, within, after
        finally:
            await store.close()

    loop_thread = threading.current_thread().name
    over, within, after = anyio.run(main)
    assert over[0] == 300000 and over[1] != loop_thread
    assert within == (300000, loop_thread)
    assert after == ([1], loop_thread)


def test_an_inline_read_cannot_write_and_a_failing_read_fails_as_on_the_reader(
    tmp_path: Path,
) -> None:
    def write(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO history_digests (since) VALUES (9)")

    def bad(conn: sqlite3.Connection) -> None:
        conn.execute("SELECT nothing FROM no_such_table")

    async def main() -> list[int]:
        store = await Store.open(tmp_path / "alp.db")
        try:
            for work in (write, bad):
                with pytest.raises(sqlite3.OperationalError):
                    await store.read_inline(work)
            return (await store.read_inline(_sinces))[0]
        finally:
            await store.close()

    assert anyio.run(main) == [1]
