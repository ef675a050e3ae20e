"""Migration 6: history entries get a digest. Entries copied before it keep none (and are
the only ones allowed none); every entry inserted after it must carry one."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alpd.store.history.entries import (
    DIGESTED_COLUMNS,
    INSERT_ENTRY,
    Value,
    entry_content,
    entry_digest,
    entry_row,
)
from alpd.store.migrations import MIGRATIONS, V6_ENTRY_DIGESTS

ENTRY = (
    "INSERT INTO history_entries (execution_id, native_id, role, kind, text, byte_offset) "
    "VALUES ('exec_a', ?, 'user', 'message', 'hello', 0)"
)


def migrated(path: Path, upto: int) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    for migration in MIGRATIONS[:upto]:
        for statement in migration:
            conn.execute(statement)
    return conn


def test_entries_before_the_migration_have_none_and_later_ones_must(tmp_path: Path) -> None:
    assert MIGRATIONS.index(V6_ENTRY_DIGESTS) == 5
    conn = migrated(tmp_path / "alp.db", 5)
    conn.execute(ENTRY, ("n1",))
    conn.execute(ENTRY, ("n2",))
    for statement in V6_ENTRY_DIGESTS:
        conn.execute(statement)
    assert conn.execute("SELECT since FROM history_digests").fetchone() == (3,)
    assert (
        conn.execute("SELECT count(*) FROM history_entries WHERE digest IS NULL").fetchone()[0] == 2
    )
    with pytest.raises(sqlite3.IntegrityError, match="needs its digest"):
        conn.execute(ENTRY, ("n3",))
    with pytest.raises(sqlite3.IntegrityError, match="immutable"):
        conn.execute("UPDATE history_digests SET since = 99")


def _digest_of(*values: Value) -> str:
    return entry_digest(entry_content(values))


def test_insert_entry_stores_the_digest_of_what_it_stored(tmp_path: Path) -> None:
    conn = migrated(tmp_path / "alp.db", len(MIGRATIONS))
    conn.create_function("alp_entry_digest", len(DIGESTED_COLUMNS), _digest_of)
    params: dict[str, Value] = dict.fromkeys(DIGESTED_COLUMNS[:-1])
    params.update(
        execution_id="exec_a", native_id="n1", role="user", kind="message",
        text='é "q"', byte_offset=7, is_error=0,
    )  # fmt: skip
    # The digest of an entry stored whole comes from where it was parsed ...
    conn.execute(INSERT_ENTRY, entry_row(params).params)
    # ... and a copy's (the same native id in another execution, stored without its text)
    # from the writer, which alone knows it is a copy.
    conn.execute(INSERT_ENTRY, entry_row({**params, "execution_id": "exec_b"}).params)
    columns = ", ".join(DIGESTED_COLUMNS)
    rows = conn.execute(
        f"SELECT json_array({columns}), digest, {columns} FROM history_entries ORDER BY id"
    ).fetchall()
    assert [(row[6], row[-1]) for row in rows] == [('é "q"', None), (None, 1)]
    for sqlite_content, digest, *values in rows:
        assert sqlite_content.encode() == entry_content(values)
        assert digest == entry_digest(sqlite_content.encode())
    nulls = ",".join(["null"] * 8)
    assert rows[0][0] == f'["exec_a","n1","user","message","é \\"q\\"",{nulls},0,7,null]'


_VALUES = st.lists(
    st.none() | st.integers(min_value=-(2**63), max_value=2**63 - 1) | st.text(),
    min_size=len(DIGESTED_COLUMNS),
    max_size=len(DIGESTED_COLUMNS),
)


@settings(max_examples=500)
@given(_VALUES)
def test_the_parse_side_content_is_sqlites_json_array(values: list[Value]) -> None:
    """Entries written before the digest moved to the parse side were digested over SQLite's
    `json_array`: both must write the same text for every value an entry holds (control
    characters, quotes, non-ASCII, NUL, big integers)."""
    conn = sqlite3.connect(":memory:")
    marks = ", ".join("?" * len(values))
    (written,) = conn.execute(f"SELECT json_array({marks})", values).fetchone()
    assert entry_content(values) == written.encode()
