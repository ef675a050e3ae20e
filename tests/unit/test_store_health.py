"""alpd.store.health: damage is told from the machine's state, and the schema check."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from alpd.store.health import (
    SCHEMA_SQL,
    DatabaseCorrupt,
    DatabaseUnavailable,
    expected_schema,
    missing_objects,
    opening_failure,
)
from alpd.store.migrations import MIGRATIONS


def sqlite_error(code: int, message: str) -> sqlite3.Error:
    exc = sqlite3.OperationalError(message)
    exc.sqlite_errorcode = code  # type: ignore[attr-defined]
    return exc


@pytest.mark.parametrize(
    ("code", "kind", "says"),
    [
        (sqlite3.SQLITE_CORRUPT, DatabaseCorrupt, "move it aside"),
        (sqlite3.SQLITE_NOTADB, DatabaseCorrupt, "move it aside"),
        (sqlite3.SQLITE_FULL, DatabaseUnavailable, "no space left"),
        (sqlite3.SQLITE_READONLY, DatabaseUnavailable, "cannot be opened for writing"),
        (sqlite3.SQLITE_CANTOPEN, DatabaseUnavailable, "cannot be opened for writing"),
        (sqlite3.SQLITE_PERM, DatabaseUnavailable, "cannot be opened for writing"),
        (sqlite3.SQLITE_IOERR, DatabaseUnavailable, "cannot be opened"),
        (sqlite3.SQLITE_IOERR_SHMSIZE, DatabaseUnavailable, "cannot be opened"),
    ],
)
def test_only_damage_sqlite_reports_is_called_damaged(
    tmp_path: Path, code: int, kind: type[Exception], says: str
) -> None:
    failure = opening_failure(tmp_path / "alp.db", sqlite_error(code, "x"))
    assert type(failure) is kind
    assert says in str(failure) and str(tmp_path / "alp.db") in str(failure)
    if kind is DatabaseUnavailable:
        assert "move it aside" not in str(failure)


def test_garbage_that_decodes_badly_is_damage(tmp_path: Path) -> None:
    failure = opening_failure(tmp_path / "alp.db", UnicodeDecodeError("utf-8", b"\xff", 0, 1, "x"))
    assert isinstance(failure, DatabaseCorrupt)


def migrated() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    for migration in MIGRATIONS:
        for statement in migration:
            conn.execute(statement)
    return conn


def test_a_fully_migrated_schema_lacks_nothing() -> None:
    conn = migrated()
    assert missing_objects(conn.execute(SCHEMA_SQL).fetchall()) == []
    assert ("table", "threads") in expected_schema()


def test_a_dropped_table_index_and_trigger_are_named() -> None:
    conn = migrated()
    conn.execute("DROP TABLE thread_revisions")
    conn.execute("DROP INDEX threads_by_owner")
    conn.execute("DROP TRIGGER snapshots_no_delete")
    assert missing_objects(conn.execute(SCHEMA_SQL).fetchall()) == [
        "index threads_by_owner",
        "table thread_revisions",
        "trigger snapshots_no_delete",
    ]
