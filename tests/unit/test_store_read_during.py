"""`Store.read_during`: one hop to the reader's thread while other work runs on the loop's;
the hop waits for that work's result when it asks for it, and an error on the loop's side
reaches the caller without leaving the reader waiting."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from alpd.store.db import Store


def _work(conn: sqlite3.Connection, awaited: Callable[[], str]) -> tuple[int, str, str]:
    count = int(conn.execute("SELECT count(*) FROM history_digests").fetchone()[0])
    return count, awaited(), threading.current_thread().name


def _on_loop() -> str:
    return threading.current_thread().name


def test_the_hop_gets_the_loops_result_and_runs_on_the_readers_thread(tmp_path: Path) -> None:
    async def main() -> tuple[int, str, str]:
        store = await Store.open(tmp_path / "alp.db")
        try:
            return await store.read_during(_work, _on_loop)
        finally:
            await store.close()

    loop_thread = threading.current_thread().name
    count, meanwhile_thread, work_thread = anyio.run(main)
    assert count == 1
    assert meanwhile_thread == loop_thread
    assert work_thread != loop_thread


def test_an_error_on_the_loops_side_is_raised_and_the_reader_goes_on(tmp_path: Path) -> None:
    def failing() -> str:
        raise ValueError("no product")

    async def main() -> int:
        store = await Store.open(tmp_path / "alp.db")
        try:
            with pytest.raises(ValueError, match="no product"):
                await store.read_during(_work, failing)
            with anyio.fail_after(10):  # the reader is not left waiting for the result
                return await store.read(lambda conn: int(conn.execute("SELECT 1").fetchone()[0]))
        finally:
            await store.close()

    assert anyio.run(main) == 1
