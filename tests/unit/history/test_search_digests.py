"""`check_entry_digests` (what `history/search` and the recap check before showing an entry)
and `Store.read` (the one hop a whole search makes to the reader thread)."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alpd.errors import HistoryEntryTampered
from alpd.store.db import Store
from alpd.store.history.entries import DIGESTED_COLUMNS, Value, entry_content, entry_digest
from alpd.store.history.search import STORED_COLUMNS_SQL, check_entry_digests

values = st.one_of(
    st.none(), st.integers(min_value=-(2**63), max_value=2**63 - 1), st.text(max_size=40)
)
entries = st.lists(st.tuples(*(values for _ in DIGESTED_COLUMNS)), min_size=1, max_size=5)

# Columns around the stored ones, as the search query has them (the slice must be found).
SELECT = (
    "SELECT 'x' AS snippet, h.id AS entry_id, h.execution_id, h.digest, h.title, "
    f"?1 AS digests_since, {STORED_COLUMNS_SQL}, 0 AS undone FROM h ORDER BY h.id"
)


def table(rows: list[tuple[Value, ...]], digests: list[str | None]) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row
    columns = ", ".join(DIGESTED_COLUMNS)
    conn.execute(f"CREATE TABLE h (id INTEGER PRIMARY KEY, digest, title, {columns})")
    marks = ", ".join("?" for _ in DIGESTED_COLUMNS)
    for row, digest in zip(rows, digests, strict=True):
        conn.execute(
            f"INSERT INTO h (digest, title, {columns}) VALUES (?, 't', {marks})", (digest, *row)
        )
    return conn


def digest_of(row: tuple[Value, ...]) -> str:
    return entry_digest(entry_content(list(row)))


@settings(max_examples=200, deadline=None)
@given(entries, st.data())
def test_an_edit_of_any_digested_column_of_any_entry_is_refused(
    rows: list[tuple[Value, ...]], data: st.DataObject
) -> None:
    conn = table(rows, [digest_of(row) for row in rows])
    check_entry_digests(conn.execute(SELECT, (0,)).fetchall())

    victim = data.draw(st.integers(0, len(rows) - 1), label="entry")
    column = data.draw(st.sampled_from(DIGESTED_COLUMNS), label="column")
    old = rows[victim][DIGESTED_COLUMNS.index(column)]
    new = data.draw(values.filter(lambda v: v != old or type(v) is not type(old)), label="new")
    conn.execute(f"UPDATE h SET {column} = ? WHERE id = ?", (new, victim + 1))
    with pytest.raises(HistoryEntryTampered) as info:
        check_entry_digests(conn.execute(SELECT, (0,)).fetchall())
    assert info.value.data["entryId"] == victim + 1


def test_only_entries_from_before_digests_may_have_none() -> None:
    rows: list[tuple[Value, ...]] = [tuple(f"v{i}" for i in range(len(DIGESTED_COLUMNS)))] * 2
    conn = table(rows, [None, digest_of(rows[1])])
    check_entry_digests(conn.execute(SELECT, (2,)).fetchall())  # entry 1 predates digests
    with pytest.raises(HistoryEntryTampered) as info:
        check_entry_digests(conn.execute(SELECT, (1,)).fetchall())
    assert info.value.data["entryId"] == 1


def test_rows_without_an_entry_are_not_checked() -> None:
    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row
    nulls = ", ".join(f"NULL AS stored_{column}" for column in DIGESTED_COLUMNS)
    rows = conn.execute(
        f"SELECT NULL AS entry_id, NULL AS execution_id, NULL AS digest, 5 AS digests_since, "
        f"{nulls}"
    ).fetchall()
    check_entry_digests(rows)
    check_entry_digests([])


def test_stored_columns_out_of_order_are_a_programming_error() -> None:
    conn = table([tuple(range(len(DIGESTED_COLUMNS)))], [None])
    shuffled = STORED_COLUMNS_SQL.replace("h.execution_id AS stored_execution_id, ", "")
    rows = conn.execute(
        "SELECT h.id AS entry_id, h.execution_id, h.digest, 0 AS digests_since, "
        f"{shuffled}, h.execution_id AS stored_execution_id FROM h"
    ).fetchall()
    with pytest.raises(ValueError, match="STORED_COLUMNS_SQL"):
        check_entry_digests(rows)


def test_store_read_runs_the_work_on_the_reader_thread_in_one_call(tmp_path: Path) -> None:
    async def main() -> tuple[int, list[int], int, str]:
        store = await Store.open(tmp_path / "alp.db")
        try:
            seen: list[int] = []

            def work(conn: sqlite3.Connection) -> list[int]:
                seen.append(threading.get_ident())
                first = conn.execute("SELECT 1").fetchone()[0]
                second = conn.execute("SELECT count(*) FROM threads").fetchone()[0]
                return [first, second]

            answer = await store.read(work)

            def failing(conn: sqlite3.Connection) -> None:
                raise LookupError("from the reader")

            with pytest.raises(LookupError, match="from the reader"):
                await store.read(failing)

            def writing(conn: sqlite3.Connection) -> None:
                conn.execute("DELETE FROM threads")

            with pytest.raises(sqlite3.OperationalError) as refused:
                await store.read(writing)
            return threading.get_ident(), seen + answer, len(seen), str(refused.value)
        finally:
            await store.close()

    loop_thread, (reader_thread, one, zero), calls, refusal = anyio.run(main)
    assert reader_thread != loop_thread
    assert (one, zero, calls) == (1, 0, 1)
    assert "readonly" in refusal
