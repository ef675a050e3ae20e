"""A test's own connection to the database a daemon uses, whichever its backend: to read what
alpd stored, or to tamper with it as an attacker with the user's rights would.

`raw_db(d)` is a `sqlite3.Connection` on SQLite, and on PostgreSQL the same few calls
(`execute(sql, params).fetchone()` …) with SQLite's SQL translated
(`alpd.store.postgres.connection.SqliteLike`), in autocommit, as the role alpd connects as
(a person's: row-level security applies, as to their own `psql`). `DROP TRIGGER name` finds
the trigger's table, which PostgreSQL's statement needs, and is run by the admin: a person
does not own the tables (tests/postgres_cluster.py), so only the admin can make tampering
possible; the tampering itself is the person's.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from collections.abc import Iterable, Iterator
from typing import Any

from postgres_cluster import admin_url

from alpd.testing.daemon import DaemonProcess

__all__ = ["raw_db"]

_DROP_TRIGGER = re.compile(r"^\s*DROP TRIGGER (\w+)\s*$", re.IGNORECASE)


class _PostgresTamperer:
    def __init__(self, conn: Any, url: str):
        from alpd.store.postgres.connection import SqliteLike

        self.pg = conn
        self._conn = SqliteLike(conn)
        self._url = url

    def execute(self, sql: str, params: Iterable[Any] = ()) -> Any:
        drop = _DROP_TRIGGER.match(sql)
        if drop:
            self._drop_trigger(drop.group(1))
            return None
        return self._conn.execute(sql, params)

    def _drop_trigger(self, name: str) -> None:
        import psycopg

        with psycopg.connect(admin_url(self._url), autocommit=True) as admin:
            row = admin.execute(
                "SELECT tgrelid::regclass::text FROM pg_trigger WHERE tgname = %s", (name,)
            ).fetchone()
            assert row is not None, f"no trigger {name}"
            admin.execute(f"DROP TRIGGER {name} ON {row[0]}")


@contextlib.contextmanager
def raw_db(d: DaemonProcess, *, admin: bool = False) -> Iterator[Any]:
    """`admin`: on PostgreSQL, connect as the admin instead (a superuser, for what only it may
    do, such as `SET session_replication_role`); SQLite has no roles."""
    url = d.env.get("ALP_STORE_URL")
    if url is None:
        conn = sqlite3.connect(d.home / "alp.db", timeout=10, isolation_level=None)
        conn.execute("PRAGMA busy_timeout = 10000")
        try:
            yield conn
        finally:
            conn.close()
        return
    import psycopg

    from alpd.store.postgres.connection import configure

    if admin:
        url = admin_url(url)
    with psycopg.connect(url, autocommit=True, cursor_factory=psycopg.ClientCursor) as pg:
        configure(pg)
        yield _PostgresTamperer(pg, url)
