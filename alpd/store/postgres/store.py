"""The PostgreSQL store: `Store`'s interface over a psycopg connection pool.

Each host's alpd keeps what SQLite gave it: its own write lock (its units one at a time),
`write(unit)` as one transaction, `read(work)` on a connection of its own. What changes is
that other hosts write the same database, so every write transaction begins with
`pg_advisory_xact_lock(WRITE_LOCK)`: write units are serialised across hosts exactly as
SQLite's `BEGIN IMMEDIATE` serialises them on one host, and every check-then-write of the
store modules (the revision compare of a continue, the one-unsettled-root reservation, the
schedule fire's claim, a handoff slot) is as correct across hosts as it is on one, without
auditing each for a row lock. It is a transaction-level lock, released by COMMIT or
ROLLBACK: it holds behind PgBouncer's transaction mode, unlike a session-level one
(docs/many-machines.md says why this and not SERIALIZABLE).

A write the server refuses for want of space (SQLSTATE 53100, disk full: a file of the database
could not be extended) is rolled back and raised `StorageFull`, as SQLite's `SQLITE_FULL` is;
reads go on, and the next write after space returns succeeds.

Reads run in `REPEATABLE READ READ ONLY` transactions: a view of several queries sees one
snapshot. No named prepared statements (`prepare_threshold=None`) and client-side binding
(`ClientCursor`): a transaction-mode pooler may hand each transaction another server
connection.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Final, TypeVar

import anyio
import psycopg
import structlog
from psycopg_pool import ConnectionPool, PoolTimeout

from alpd.errors import StorageFull
from alpd.store.db import DatabaseTooNew, DatabaseUnavailable, Row, Store
from alpd.store.migrations import (
    LATEST_VERSION,
    MIGRATIONS,
    POSTGRES_BASELINE,
    POSTGRES_MIGRATIONS,
)
from alpd.store.postgres.connection import (
    AsyncSqliteLike,
    InlineSqliteLike,
    SqliteLike,
    configure,
    run_whole,
)
from alpd.store.postgres.dialect import ddl
from alpd.store.postgres.persons import bind_tables
from alpd.store.postgres.schema import BASELINE

__all__ = ["IDLE_IN_WRITE_SECONDS", "WRITE_LOCK", "PostgresStore", "postgres_migration", "redacted"]

T = TypeVar("T")

log = structlog.get_logger("alpd.store")

#: the key of the transaction-level advisory lock every write transaction takes ("alp\0w")
WRITE_LOCK: Final = 0x616C7000_77
#: seconds a write transaction may wait on alpd between two statements before the server ends
#: its session (`idle_in_transaction_session_timeout`, set for the transaction only, as the
#: lock is, so it holds behind a transaction pooler too). An alpd suspended inside a write (a
#: laptop's lid closed, SIGSTOP) would otherwise hold `WRITE_LOCK`, and stop every other
#: host's writes, lease renewals and take-overs included, for as long as it sleeps. A write
#: unit waits on alpd for milliseconds; a resumed alpd finds that write failed and its lease
#: taken.
IDLE_IN_WRITE_SECONDS: Final = 10
#: connections of one alpd: its writer, and readers beside it
POOL_SIZE: Final = 4
#: how long a unit waits for a connection before the database counts as unavailable
CONNECT_TIMEOUT_SECONDS: Final = 10.0

#: how a read begins: one snapshot for all its statements, and no write among them
_READ_BEGIN: Final = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"

_SCHEMA_TABLE: Final = "CREATE TABLE alp_schema (version INTEGER NOT NULL)"


def redacted(url: str) -> str:
    """`url` without its password, for messages and logs."""
    info = psycopg.conninfo.conninfo_to_dict(url)
    info.pop("password", None)
    return psycopg.conninfo.make_conninfo("", **{k: v for k, v in info.items() if v is not None})


class PostgresStore(Store):
    """Owns the connection pool of one alpd on a PostgreSQL database."""

    dialect = "postgres"

    def __init__(self, url: str, pool: ConnectionPool[Any]):
        self.url = url
        self.path = Path(redacted(url))
        self._pool = pool
        self._write_lock = anyio.Lock()
        self._bulk = 0
        #: where a read's ROLLBACK is sent and waited for, its connection then put back,
        #: while the reader goes on with the read's result
        self._ending = ThreadPoolExecutor(max_workers=1, thread_name_prefix="alp-pg-read-end")

    @classmethod
    async def open(cls, path: Path) -> Store:
        raise TypeError("a PostgreSQL store opens from a URL: PostgresStore.connect(url)")

    @classmethod
    async def connect(cls, url: str) -> PostgresStore:
        pool: ConnectionPool[Any] = ConnectionPool(
            url,
            min_size=1,
            max_size=POOL_SIZE,
            kwargs={"prepare_threshold": None, "cursor_factory": psycopg.ClientCursor},
            configure=configure,
            timeout=CONNECT_TIMEOUT_SECONDS,
            open=False,
        )
        try:
            await anyio.to_thread.run_sync(_open_and_migrate, pool, url)
        except BaseException:
            await anyio.to_thread.run_sync(pool.close)
            raise
        return cls(url, pool)

    async def close(self) -> None:
        with anyio.CancelScope(shield=True):
            async with self._write_lock:
                await anyio.to_thread.run_sync(self._ending.shutdown)
                await anyio.to_thread.run_sync(self._pool.close)

    async def write(self, unit: Callable[[Any], Awaitable[T]]) -> T:
        async with self._write_lock:
            with anyio.CancelScope(shield=True):
                conn = await anyio.to_thread.run_sync(self._getconn)
                try:
                    await anyio.to_thread.run_sync(_begin_write, conn)
                    result = await unit(AsyncSqliteLike(SqliteLike(conn)))
                    await anyio.to_thread.run_sync(conn.commit)
                except BaseException as exc:
                    await anyio.to_thread.run_sync(_roll_back, conn)
                    if _disk_full(exc):
                        raise self._storage_full(exc) from exc
                    raise
                finally:
                    self._pool.putconn(conn)
            return result

    async def write_blocking(self, unit: Callable[[Any], T]) -> T:
        async with self._write_lock:
            with anyio.CancelScope(shield=True):
                result = await anyio.to_thread.run_sync(self._write_now, unit)
            return result

    def _write_now(self, unit: Callable[[Any], T]) -> T:
        conn = self._getconn()
        try:
            _begin_write(conn)
            result = unit(SqliteLike(conn))
            conn.commit()
        except BaseException as exc:
            _roll_back(conn)
            if _disk_full(exc):
                raise self._storage_full(exc) from exc
            raise
        finally:
            self._pool.putconn(conn)
        return result

    @contextlib.asynccontextmanager
    async def bulk(self) -> AsyncIterator[None]:
        """Nothing to tune: PostgreSQL checkpoints by its own settings."""
        yield

    async def fetchall(self, sql: str, params: Iterable[Any] = ()) -> list[Row]:
        rows: list[Row] = await anyio.to_thread.run_sync(self._read_alone, sql, tuple(params))
        return rows

    async def fetchone(self, sql: str, params: Iterable[Any] = ()) -> Row | None:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def fetch_many(self, queries: Sequence[tuple[str, Iterable[Any]]]) -> list[list[Row]]:
        return await self.read(
            lambda conn: [conn.execute(sql, tuple(params)).fetchall() for sql, params in queries]
        )

    async def read(self, work: Callable[[Any], T]) -> T:
        return await anyio.to_thread.run_sync(self._read_now, work)

    async def read_unit(self, unit: Callable[[Any], Coroutine[Any, Any, T]]) -> T:
        """`unit` in a read's transaction (one snapshot, `READ ONLY`), whole on one worker
        thread: no write lock (a read waits for no other host's write), one hop for all its
        statements (`run_whole`)."""
        return await self.read(lambda conn: run_whole(unit, InlineSqliteLike(conn)))

    async def read_inline(self, work: Callable[[Any], T], budget: float = 0.0) -> T:
        """A networked database has no read without a hop: `read`."""
        return await self.read(work)

    def _read_now(self, work: Callable[[Any], T]) -> T:
        conn = self._getconn()
        # The BEGIN goes in front of the first statement, in one message, and the ROLLBACK
        # is sent after the result is handed back (`_ending`): a read of one statement waits
        # for one round trip, not four (the bench counts them: under load each is a wait for
        # the server's process to be scheduled).
        conn.autocommit = True
        try:
            result = work(SqliteLike(conn, begin=_READ_BEGIN))
        except BaseException:
            self._end_read(conn)
            raise
        try:
            self._ending.submit(self._end_read, conn)
        except RuntimeError:  # the store is closing: no one to hand it to
            self._end_read(conn)
        return result

    def _end_read(self, conn: psycopg.Connection[Any]) -> None:
        try:
            _roll_back(conn)
            conn.autocommit = False
        finally:
            self._pool.putconn(conn)

    def _read_alone(self, sql: str, values: tuple[Any, ...]) -> list[Row]:
        """A read of one statement: its BEGIN and COMMIT in the same message, one round trip
        (`_read_now` needs a second, its ROLLBACK, not knowing when `work` is done)."""
        conn = self._getconn()
        conn.autocommit = True
        try:
            cursor: Any = SqliteLike(conn).execute_alone(sql, values, _READ_BEGIN)
            rows: list[Row] = cursor.fetchall()
            return rows
        finally:
            _roll_back(conn)
            conn.autocommit = False
            self._pool.putconn(conn)

    async def writer_alive(self) -> bool:
        row = await self.fetchone("SELECT 1")
        return row is not None and row[0] == 1

    def _storage_full(self, exc: BaseException) -> StorageFull:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return StorageFull(
            f"the database server has no space left for alp's data ({self.path}): {reason}; "
            "free space on the server, then retry (reads go on meanwhile)"
        )

    def _getconn(self) -> psycopg.Connection[Any]:
        try:
            conn: psycopg.Connection[Any] = self._pool.getconn()
        except PoolTimeout as exc:
            raise DatabaseUnavailable(
                f"{self.path}: no connection within {CONNECT_TIMEOUT_SECONDS:g} s ({exc}); "
                "check that the server is up and [store] url is right"
            ) from exc
        return conn


def _disk_full(exc: BaseException) -> bool:
    """SQLSTATE 53100: the server could not extend a file of the database (its disk, or the
    tablespace's, is full), raised as it is or as the `sqlite3` error a statement raises."""
    return isinstance(exc, psycopg.errors.DiskFull) or isinstance(
        exc.__cause__, psycopg.errors.DiskFull
    )


def _begin_write(conn: psycopg.Connection[Any]) -> None:
    conn.execute(
        "SELECT set_config('idle_in_transaction_session_timeout', %s, true), "
        "pg_advisory_xact_lock(%s)",
        (f"{IDLE_IN_WRITE_SECONDS}s", WRITE_LOCK),
    )


def _roll_back(conn: psycopg.Connection[Any]) -> None:
    if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        try:
            conn.rollback()
        except psycopg.Error:
            log.exception("rollback_failed")


def postgres_migration(number: int) -> tuple[str, ...]:
    """Migration `number` as PostgreSQL runs it: its own statements, or SQLite's translated."""
    own = POSTGRES_MIGRATIONS.get(number)
    if own is not None:
        return own
    return tuple(ddl(statement) for statement in MIGRATIONS[number - 1])


def _open_and_migrate(pool: ConnectionPool[Any], url: str) -> None:
    try:
        pool.open(wait=True, timeout=CONNECT_TIMEOUT_SECONDS)
    except PoolTimeout as exc:
        raise DatabaseUnavailable(
            f"{redacted(url)}: cannot connect within {CONNECT_TIMEOUT_SECONDS:g} s; check "
            "that the server is up, and the host, database and role in [store] url "
            "(or ALP_STORE_URL)"
        ) from exc
    with pool.connection() as conn:
        _begin_write(conn)
        _migrate(conn)


def _migrate(conn: psycopg.Connection[Any]) -> None:
    """Baseline a new database, then apply each later migration's PostgreSQL statements; one
    transaction under the write lock, so two hosts starting at once migrate once."""
    row = conn.execute("SELECT to_regclass('alp_schema') IS NOT NULL").fetchone()
    if row is None or not row[0]:
        for statement in BASELINE:
            conn.execute(statement)
        conn.execute(_SCHEMA_TABLE)
        conn.execute("INSERT INTO alp_schema (version) VALUES (%s)", (POSTGRES_BASELINE,))
    found = conn.execute("SELECT version FROM alp_schema").fetchone()
    version = int(found[0]) if found else 0
    if version > LATEST_VERSION:
        raise DatabaseTooNew(
            f"database schema version {version} is newer than this alpd knows "
            f"({LATEST_VERSION}); upgrade alp on this host"
        )
    for number in range(version + 1, LATEST_VERSION + 1):
        for statement in postgres_migration(number):
            conn.execute(statement)
    if version < LATEST_VERSION:
        # A person's role may read alp_schema, never change it: the schema's owner migrates.
        conn.execute("UPDATE alp_schema SET version = %s", (LATEST_VERSION,))
        bound = bind_tables(conn)
        if bound:
            log.info("tables_bound_to_persons", tables=len(bound))
    conn.commit()
