"""The store's writer: a blocking unit is one transaction (committed whole or rolled back
whole); the writer's page cache; bulk settings hold while any bulk write runs."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import anyio
import pytest

from alpd.store.db import BULK_CHECKPOINT_PAGES, CHECKPOINT_PAGES, Store, on_thread


def _pragma(conn: sqlite3.Connection, name: str) -> int:
    return int(conn.execute(f"PRAGMA {name}").fetchone()[0])


def test_a_blocking_unit_commits_whole_or_not_at_all(tmp_path: Path) -> None:
    async def main() -> list[str]:
        store = await Store.open(tmp_path / "alp.db")
        try:

            def good(conn: sqlite3.Connection) -> None:
                conn.execute("INSERT INTO history_digests (since) VALUES (7)")

            def bad(conn: sqlite3.Connection) -> None:
                conn.execute("INSERT INTO history_digests (since) VALUES (8)")
                raise RuntimeError("half way")

            await store.write_blocking(good)
            with pytest.raises(RuntimeError, match="half way"):
                await store.write_blocking(bad)
            rows = await store.fetchall("SELECT since FROM history_digests ORDER BY since")
            return [str(r[0]) for r in rows]
        finally:
            await store.close()

    assert anyio.run(main) == ["1", "7"]


def test_bulk_settings_hold_while_any_bulk_write_runs(tmp_path: Path) -> None:
    async def main() -> list[tuple[int, int]]:
        store = await Store.open(tmp_path / "alp.db")
        seen = []

        async def settings() -> None:
            seen.append(
                (
                    await on_thread(store._writer, _pragma, "wal_autocheckpoint"),
                    await on_thread(store._writer, _pragma, "cache_size"),
                )
            )

        try:
            await settings()
            async with store.bulk():
                await settings()
                async with store.bulk():
                    await settings()
                await settings()  # the outer bulk write still runs
            await settings()
        finally:
            await store.close()
        return seen

    normal, bulk = CHECKPOINT_PAGES, BULK_CHECKPOINT_PAGES
    cache = -8192
    assert anyio.run(main) == [
        (normal, cache),
        (bulk, cache),
        (bulk, cache),
        (bulk, cache),
        (normal, cache),
    ]
