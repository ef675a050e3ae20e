"""Why a database will not open, and whether its schema is whole — told apart so that only a
damaged file is ever called damaged.

"Move it aside" is advice that loses data if the file was fine, so it is given only for
damage SQLite itself reports (SQLITE_CORRUPT, SQLITE_NOTADB, a failed `quick_check`) and for
a schema that lacks a table or index a migration made (someone dropped it). Everything else
is the machine's state, said as such, and fixed by fixing the machine: no space left
(SQLITE_FULL, or SQLITE_IOERR on a filesystem with no free block — opening a WAL database
writes its shared-memory file), a file or directory that cannot be written (SQLITE_READONLY,
SQLITE_CANTOPEN, SQLITE_PERM), any other I/O error.

The schema check compares the objects in `sqlite_master` with those the migrations create on
an empty in-memory database, so it needs no list kept by hand.
"""

from __future__ import annotations

import functools
import os
import sqlite3
from pathlib import Path
from typing import Final

from alpd.store.migrations import MIGRATIONS

_DAMAGED: Final = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
_NOT_WRITABLE: Final = frozenset(
    {sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM}
)


class DatabaseCorrupt(Exception):
    """The file is damaged (SQLite says so, or `quick_check` failed, or the schema lacks
    objects the migrations made); it has to be restored or moved aside."""


class DatabaseForeign(Exception):
    """The file is a SQLite database of someone else's (another application_id, or tables
    none of which is alp's): alp neither adopts nor changes it."""


class DatabaseUnavailable(Exception):
    """The database cannot be opened for a reason of the machine's (space, permissions, I/O);
    the file itself is not known to be damaged and must be left where it is."""


def opening_failure(path: Path, exc: BaseException) -> Exception:
    """The startup error for `exc`, raised while opening, checking or migrating `path`."""
    if isinstance(exc, UnicodeDecodeError):  # garbage text read as a schema
        return DatabaseCorrupt(f"{path} is damaged ({exc}); move it aside to start afresh")
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    if code in _DAMAGED:
        return DatabaseCorrupt(f"{path} is damaged ({exc}); move it aside to start afresh")
    if code == sqlite3.SQLITE_FULL or _no_space_left(path):
        return DatabaseUnavailable(
            f"{path}: no space left on its filesystem ({exc}); free some space and start "
            "alpd again (the database is not damaged)"
        )
    if code in _NOT_WRITABLE:
        return DatabaseUnavailable(
            f"{path}: cannot be opened for writing ({exc}); alpd needs to read and write the "
            f"file and to create {path.name}-wal and {path.name}-shm beside it: check the "
            "permissions and the mount of that directory"
        )
    return DatabaseUnavailable(f"{path}: cannot be opened ({exc})")


def _no_space_left(path: Path) -> bool:
    try:
        return os.statvfs(path.parent).f_bavail == 0
    except OSError:
        return False


SCHEMA_SQL: Final = (
    "SELECT type, name FROM sqlite_master "
    "WHERE type IN ('table', 'index', 'view', 'trigger') AND name NOT LIKE 'sqlite_%'"
)


@functools.cache
def expected_schema() -> frozenset[tuple[str, str]]:
    """(type, name) of every table, index, view and trigger the migrations create."""
    conn = sqlite3.connect(":memory:")
    try:
        for migration in MIGRATIONS:
            for statement in migration:
                conn.execute(statement)
        return _objects(conn.execute(SCHEMA_SQL).fetchall())
    finally:
        conn.close()


def _objects(rows: list[tuple[str, str]] | list[sqlite3.Row]) -> frozenset[tuple[str, str]]:
    return frozenset((str(row[0]), str(row[1])) for row in rows)


def missing_objects(rows: list[sqlite3.Row]) -> list[str]:
    """What `rows` (`SCHEMA_SQL` run on the database) lacks, as "table threads" …"""
    return sorted(f"{kind} {name}" for kind, name in expected_schema() - _objects(rows))
