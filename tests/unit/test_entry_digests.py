"""Migration 6: history entries get a digest. Entries copied before it keep none (and are
the only ones allowed none); every entry inserted after it must carry one."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from alpd.store.history import DIGESTED_COLUMNS, INSERT_ENTRY, entry_content, entry_digest
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


def test_insert_entry_stores_the_digest_of_what_it_stored(tmp_path: Path) -> None:
    conn = migrated(tmp_path / "alp.db", len(MIGRATIONS))
    conn.create_function("alp_entry_digest", 1, entry_digest, deterministic=True)
    params = dict.fromkeys(DIGESTED_COLUMNS)
    params.update(
        execution_id="exec_a", native_id="n1", role="user", kind="message",
        text='é "q"', byte_offset=7, is_error=0,
    )  # fmt: skip
    conn.execute(INSERT_ENTRY, params)
    # The same native id in another execution: a copy, stored without its text.
    conn.execute(INSERT_ENTRY, {**params, "execution_id": "exec_b"})
    rows = conn.execute(
        f"SELECT {entry_content()}, digest, text, copy_of FROM history_entries ORDER BY id"
    ).fetchall()
    assert [(text, copy_of) for _, _, text, copy_of in rows] == [('é "q"', None), (None, 1)]
    for content, digest, _, _ in rows:
        assert digest == entry_digest(content)
    nulls = ",".join(["null"] * 8)
    assert rows[0][0] == f'["exec_a","n1","user","message","é \\"q\\"",{nulls},0,7,null]'
