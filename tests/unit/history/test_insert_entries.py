"""`insert_entries`: entries computed where they were parsed (digest, folded body, CJK
routing), written and indexed by set-based statements on the writer; only the rows that may
be copies go through the copy-aware `INSERT_ENTRY`."""

from __future__ import annotations

from pathlib import Path

import aiosqlite
import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from alpd.store.db import on_thread
from alpd.store.history.entries import (
    DIGESTED_COLUMNS,
    INSERT_ENTRY,
    EntryRow,
    Value,
    entry_content,
    entry_digest,
    entry_row,
    insert_entries,
    register_functions,
)
from alpd.store.migrations import MIGRATIONS


def _row(execution: str, native: str, text: str) -> EntryRow:
    params: dict[str, Value] = dict.fromkeys(DIGESTED_COLUMNS[:-1])
    params.update(
        execution_id=execution, native_id=native, role="user", kind="message", text=text,
        byte_offset=0, is_error=0,
    )  # fmt: skip
    return entry_row(params)


def test_entries_are_digested_folded_and_routed_where_they_are_parsed() -> None:
    plain, folded, cjk = _row("e", "1", "plain"), _row("e", "2", "đường"), _row("e", "3", "日本語")
    assert (plain.folded, plain.cjk) == (None, False)
    assert (folded.folded, folded.cjk) == ("dường\n\n\n", False)
    assert (cjk.folded, cjk.cjk) == (None, True)


def test_inserted_entries_are_indexed_once_each_folded_and_routed(tmp_path: Path) -> None:
    async def main() -> list[tuple[object, ...]]:
        async with aiosqlite.connect(tmp_path / "alp.db") as conn:
            for migration in MIGRATIONS:
                for statement in migration:
                    await conn.execute(statement)
            await register_functions(conn)
            _, first = await on_thread(conn, insert_entries, [_row("a", "1", "hello wombat")])
            assert first == 1
            before, added = await on_thread(
                conn,
                insert_entries,
                [
                    _row("a", "1", "already stored"),  # same key: nothing new
                    _row("b", "2", "Đường wombat"),
                    _row("b", "2", "a repeat of native id 2"),  # the first one is stored
                    _row("b", "3", "東京の wombat"),
                    _row("b", "1", "a copy of a's entry 1"),  # stored as a pointer
                    _row("b", "4", "plain wombat"),
                ],
            )
            assert (before, added) == (1, 4)
            checks = []
            for sql in (
                "SELECT id, copy_of FROM history_entries ORDER BY id",
                "SELECT rowid FROM search_words WHERE search_words MATCH 'wombat' ORDER BY rowid",
                "SELECT id FROM cjk_docs ORDER BY id",
                "SELECT rowid FROM search_cjk WHERE search_cjk MATCH '東京の' ORDER BY rowid",
                "SELECT rowid FROM search_words WHERE search_words MATCH 'duong'",
            ):
                async with conn.execute(sql) as cur:
                    checks.append(tuple(tuple(r) for r in await cur.fetchall()))
            async with conn.execute(
                f"SELECT digest, {', '.join(DIGESTED_COLUMNS)} FROM history_entries"
            ) as cur:
                for digest, *values in await cur.fetchall():
                    assert digest == entry_digest(entry_content(values))
            return checks

    entries, words, cjk_docs, cjk_hits, folded_hits = anyio.run(main)
    assert entries == ((1, None), (2, None), (3, None), (4, 1), (5, None))
    assert words == ((1,), (2,), (3,), (5,))  # once each; the copy (4) is not indexed
    assert cjk_docs == ((3,),)
    assert cjk_hits == ((3,),)
    assert folded_hits == ((2,),)  # indexed folded: "Đường" is found as "duong"


_BATCHES = st.lists(
    st.lists(
        st.tuples(st.sampled_from("abc"), st.sampled_from("1234"), st.sampled_from(["x", "y z"])),
        max_size=8,
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=60, deadline=None)
@given(batches=_BATCHES)
def test_batches_store_what_the_copy_aware_insert_stores_row_by_row(
    batches: list[list[tuple[str, str, str]]],
) -> None:
    """Rows that cannot be copies skip the copy look-up (`INSERT_WHOLE`); the table is the
    same, ids and copies included, as `INSERT_ENTRY` one row at a time makes it."""
    select = f"SELECT id, digest, {', '.join(DIGESTED_COLUMNS)} FROM history_entries ORDER BY id"

    async def main() -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
        tables = []
        for batched in (True, False):
            async with aiosqlite.connect(":memory:") as conn:
                for migration in MIGRATIONS:
                    for statement in migration:
                        await conn.execute(statement)
                await register_functions(conn)
                for batch in batches:
                    rows = [_row(*spec) for spec in batch]
                    if batched:
                        await on_thread(conn, insert_entries, rows)
                    else:
                        for row in rows:
                            await conn.execute(INSERT_ENTRY, row.params)
                async with conn.execute(select) as cur:
                    tables.append([tuple(r) for r in await cur.fetchall()])
        return tables[0], tables[1]

    batched, one_by_one = anyio.run(main)
    assert batched == one_by_one
