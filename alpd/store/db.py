"""The SQLite store: one writer connection, one reader connection, WAL mode.

All writes go through `Store.write(unit)`: the unit runs inside one `BEGIN IMMEDIATE …
COMMIT` on the single writer connection, serialised by a lock, so each use case is atomic
and no two writers ever interleave. `synchronous=FULL`: a write acknowledged to a client
survives a crash of alpd or of the machine (WAL + NORMAL would only survive the former).

aiosqlite runs each connection on its own thread and cannot cancel a queued call, so a
cancelled `await commit()` could still commit behind our back; the unit therefore runs
shielded from cancellation once it has begun.
"""

from __future__ import annotations

# long: the Store class whole (its two connections, their opening and checks, and the ways a
# unit of work reaches them: write, read, read during loop work, read inline)
import asyncio
import concurrent.futures
import contextlib
import sqlite3
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Coroutine,
    Iterable,
    Mapping,
    Sequence,
)
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeAlias, TypeVar

import aiosqlite
import anyio
import structlog

from alpd.errors import StorageFull
from alpd.store.health import (
    SCHEMA_SQL,
    DatabaseCorrupt,
    DatabaseForeign,
    DatabaseUnavailable,
    missing_objects,
    opening_failure,
)
from alpd.store.inline import BUDGET, InlineReader
from alpd.store.migrations import APPLICATION_ID, LATEST_VERSION, MIGRATIONS

T = TypeVar("T")
U = TypeVar("U")
P = ParamSpec("P")

log = structlog.get_logger("alpd.store")

Row = sqlite3.Row
#: the handle of one unit of work (`Store.write`): services pass it through to the store's
#: functions, which alone use it; a second backend gives its own transaction here
Tx: TypeAlias = aiosqlite.Connection
#: the same for a blocking unit (`Store.write_blocking`) and a read (`Store.read`)
BlockingTx: TypeAlias = sqlite3.Connection
Unit = Callable[[Tx], Awaitable[T]]


__all__ = [
    "BlockingTx",
    "DatabaseCorrupt",
    "DatabaseForeign",
    "DatabaseTooNew",
    "DatabaseUnavailable",
    "Store",
    "Tx",
    "dialect_of",
    "on_thread",
    "open_store",
    "store_url",
]


class DatabaseTooNew(Exception):
    """The database was written by a newer alpd; running older code on it could corrupt it."""


def is_storage_full(exc: sqlite3.Error) -> bool:
    """SQLITE_FULL: the disk (or the page limit) has no room for what was being written."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF == sqlite3.SQLITE_FULL


#: what opening, checking or migrating a file raises (garbage text decodes as invalid UTF-8);
#: `alpd.store.health.opening_failure` tells damage from the machine's state
_OPENING = (sqlite3.DatabaseError, UnicodeDecodeError)

_PRAGMAS = (
    "PRAGMA journal_mode = WAL",
    "PRAGMA synchronous = FULL",
    "PRAGMA foreign_keys = ON",
    "PRAGMA busy_timeout = 5000",
)
#: the writer's page cache (8 MiB; SQLite's default is 2): a history import batch writes
#: ~4 MiB of rows plus their index pages, and with the default cache the inserts spilled and
#: re-read their own pages (bench, 300 MB import: the inserts -30%, the writer -10% CPU;
#: 16 MiB did no better)
_WRITER_CACHE = "PRAGMA cache_size = -8192"
#: WAL pages between checkpoints: SQLite's default, and during a bulk write (`Store.bulk`)
CHECKPOINT_PAGES = 1000
BULK_CHECKPOINT_PAGES = 10_000


async def on_thread(
    conn: aiosqlite.Connection,
    fn: Callable[Concatenate[sqlite3.Connection, P], T],
    *args: P.args,
    **kwargs: P.kwargs,
) -> T:
    """`fn(the sqlite3 connection, …)` on `conn`'s own thread, in one hop. Each hop between
    the event loop and that thread is two thread wake-ups, which a loaded machine stretches
    to milliseconds: work of many statements pays them once this way, not per statement.
    aiosqlite has no public call for it: `_execute` is the one its own methods use."""
    result: T = await conn._execute(fn, conn._conn, *args, **kwargs)  # type: ignore[no-untyped-call]
    return result


def _transaction(conn: sqlite3.Connection, unit: Callable[[sqlite3.Connection], T]) -> T:
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = unit(conn)
        conn.execute("COMMIT")
    except BaseException:
        _roll_back(conn)
        raise
    return result


def _roll_back(conn: sqlite3.Connection) -> None:
    # SQLite has already rolled back by itself after some errors (SQLITE_FULL,
    # SQLITE_IOERR, …): a ROLLBACK then fails and would hide the real error.
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            log.exception("rollback_failed")


async def _connect(path: Path, *, read_only: bool) -> aiosqlite.Connection:
    conn = await aiosqlite.connect(path, isolation_level=None)
    try:
        conn.row_factory = sqlite3.Row
        for pragma in _PRAGMAS:
            await conn.execute(pragma)
        await conn.execute("PRAGMA query_only = ON" if read_only else _WRITER_CACHE)
    except BaseException:
        # aiosqlite's worker thread would otherwise keep the process alive.
        await conn.close()
        raise
    return conn


def dialect_of(handle: object) -> str:
    """`sqlite` or `postgres`: the SQL a store, unit or read connection speaks, for the few
    statements written once per backend (full-text search); every other statement is
    SQLite's, translated for PostgreSQL (`alpd.store.postgres.dialect`)."""
    return str(getattr(handle, "dialect", "sqlite"))


class Store:
    """Owns the database connections of one alpd."""

    dialect = "sqlite"

    def __init__(self, path: Path, writer: aiosqlite.Connection, reader: aiosqlite.Connection):
        self.path = path
        self._writer = writer
        self._reader = reader
        self._write_lock = anyio.Lock()
        self._bulk = 0
        self._inline = InlineReader(path)

    @classmethod
    async def open(cls, path: Path) -> Store:
        fresh = not path.exists()
        try:
            if not fresh:
                await anyio.to_thread.run_sync(_check_ours, path)
            writer = await _connect(path, read_only=False)
        except _OPENING as exc:
            raise opening_failure(path, exc) from exc
        if fresh:
            path.chmod(0o600)
        try:
            await _check_integrity(writer, path)
            await _migrate(writer)
            await _stamp_ours(writer)
            await _check_schema(writer, path)
            await _check_writable(writer)
            reader = await _connect(path, read_only=True)
        except _OPENING as exc:
            await writer.close()
            raise opening_failure(path, exc) from exc
        except BaseException:
            await writer.close()
            raise
        return cls(path, writer, reader)

    async def close(self) -> None:
        self._inline.close()
        with anyio.CancelScope(shield=True):
            await self._reader.close()
            async with self._write_lock:
                await self._writer.close()

    async def write(self, unit: Unit[T]) -> T:
        """Run `unit` as one BEGIN IMMEDIATE … COMMIT on the writer; roll back on error."""
        return await self._serialised(self._write_unit, unit)

    async def read_unit(self, unit: Callable[[Tx], Coroutine[Any, Any, T]]) -> T:
        """`unit` (a unit of `Tx` calls that only reads) over one consistent view of the
        database. Here a unit on the writer, as `write`: the one connection whose statements
        run inside one transaction without a hop each to another thread being shared with
        other reads (the reader's `read` is one hop of plain calls, not a unit's awaits)."""
        return await self.write(unit)

    async def write_blocking(self, unit: Callable[[sqlite3.Connection], T]) -> T:
        """`write` for a unit of plain (blocking) sqlite3 calls: BEGIN, the unit and COMMIT
        run on the writer's thread in one hop (`on_thread`), for bulk work."""
        return await self._serialised(on_thread, self._writer, _transaction, unit)

    @contextlib.asynccontextmanager
    async def bulk(self) -> AsyncIterator[None]:
        """Settings for a bulk write (a history import), while one runs: the WAL is
        checkpointed every ~40 MiB instead of every ~4 MiB. Each commit is still synced (the
        durability of what is committed is unchanged); the WAL grows larger between
        checkpoints, and a checkpoint copies a page once however often it changed meanwhile
        (bench, 300 MB import: the writer -8% CPU)."""
        self._bulk += 1
        try:
            if self._bulk == 1:
                await self._checkpoint_every(BULK_CHECKPOINT_PAGES)
            yield
        finally:
            self._bulk -= 1
            if self._bulk == 0:
                with anyio.CancelScope(shield=True):
                    await self._checkpoint_every(CHECKPOINT_PAGES)

    async def _checkpoint_every(self, pages: int) -> None:
        async with self._write_lock:
            await self._writer.execute(f"PRAGMA wal_autocheckpoint = {pages}")

    async def _serialised(
        self, run: Callable[P, Awaitable[T]], *args: P.args, **kwargs: P.kwargs
    ) -> T:
        async with self._write_lock:
            with anyio.CancelScope(shield=True):
                try:
                    result = await run(*args, **kwargs)
                except sqlite3.Error as exc:
                    if is_storage_full(exc):
                        raise StorageFull(
                            f"no space left for the state database ({self.path}): {exc}; "
                            "free some space, then retry (reads go on meanwhile)"
                        ) from exc
                    raise
            return result

    async def _write_unit(self, unit: Unit[T]) -> T:
        conn = self._writer
        await conn.execute("BEGIN IMMEDIATE")
        try:
            result = await unit(conn)
            await conn.execute("COMMIT")
        except BaseException:
            await on_thread(conn, _roll_back)
            raise
        return result

    async def fetchall(self, sql: str, params: Iterable[Any] = ()) -> list[Row]:
        # One hop to the reader thread (execute and fetch together), not two.
        return list(await self._reader.execute_fetchall(sql, tuple(params)))

    async def fetchone(self, sql: str, params: Iterable[Any] = ()) -> Row | None:
        rows = await self._reader.execute_fetchall(sql, tuple(params))
        return next(iter(rows), None)

    async def fetch_many(self, queries: Sequence[tuple[str, Iterable[Any]]]) -> list[list[Row]]:
        """Several reads in one hop to the reader thread (`daemon/ps` asks for its views
        together)."""
        return await self.read(
            lambda conn: [conn.execute(sql, tuple(params)).fetchall() for sql, params in queries]
        )

    async def read(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """`work(connection)` run on the reader connection, in its thread: one hop however
        many statements it runs and whatever Python it does with their rows. Each hop costs
        a thread handoff (two context switches; milliseconds on a loaded machine), so a view
        made of several queries, or a query and the checks of its rows, is one unit of work.
        The connection is query_only; `work` must not keep it or its cursors."""
        return await on_thread(self._reader, work)

    async def read_during(
        self,
        work: Callable[[sqlite3.Connection, Callable[[], U]], T],
        meanwhile: Callable[[], U],
    ) -> T:
        """One hop to the reader's thread (as `read`) while `meanwhile()` runs on the loop's
        thread: `work(connection, awaited)` calls `awaited()` for `meanwhile`'s result (it
        blocks until there is one, or raises its error). SQLite releases the GIL while it
        steps, so Python that holds it (a search's vector product) overlaps the statements
        `work` runs before it needs the result."""
        result: concurrent.futures.Future[U] = concurrent.futures.Future()
        task = asyncio.ensure_future(self.read(lambda conn: work(conn, result.result)))
        try:
            await asyncio.sleep(0)  # the task runs up to its await: `work` is queued
            value = meanwhile()
        except BaseException:
            # the reader's `work` must never wait for it: it stops there, its error dropped
            result.set_exception(RuntimeError("the loop's part of the read failed"))
            task.add_done_callback(_retrieved)
            raise
        result.set_result(value)
        return await task

    async def read_inline(
        self, work: Callable[[sqlite3.Connection], T], budget: float = BUDGET
    ) -> T:
        """`work(connection)` at once on the event loop's thread, no hop (`alpd.store.inline`):
        for a small read bounded by indexes and LIMITs whose Python is bounded too (a
        transcript page). Past `budget` seconds of statements, or on a SQLite error, it is
        done again through `read`."""
        try:
            return self._inline.run(work, budget)
        except sqlite3.OperationalError as exc:
            log.debug(
                "inline_read_handed_over", over_budget=self._inline.interrupted, error=str(exc)
            )
        return await self.read(work)

    async def writer_alive(self) -> bool:
        """A trivial round trip through the writer connection (for the systemd watchdog)."""
        async with self._write_lock, self._writer.execute("SELECT 1") as cursor:
            row = await cursor.fetchone()
        return row is not None and row[0] == 1


def _retrieved(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


async def _check_integrity(conn: aiosqlite.Connection, path: Path) -> None:
    async with conn.execute("PRAGMA quick_check") as cursor:
        rows = [row[0] for row in await cursor.fetchall()]
    if rows != ["ok"]:
        damage = "; ".join(str(r) for r in rows[:5])
        raise DatabaseCorrupt(
            f"{path} is damaged (integrity check: {damage}); move it aside to start afresh"
        )


#: tables every alp database has had since V2: a database without an application_id and
#: with these is alp's from before V18
_ALP_TABLES = frozenset({"threads", "thread_revisions", "executions"})


async def _stamp_ours(conn: aiosqlite.Connection) -> None:
    """An alp database already at V18 that lost its application_id (written by hand, or an
    alp from before a V18 that set it) gets it back: `_check_ours` knew it by its tables."""
    async with conn.execute("PRAGMA application_id") as cursor:
        row = await cursor.fetchone()
    if not row or int(row[0]) != APPLICATION_ID:
        await conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")


def _check_ours(path: Path) -> None:
    """Refuse a SQLite database that is not alp's before anything writes to it (the writer's
    own connection would already switch it to WAL). A plain connection that only reads."""
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
        app_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
        if app_id == APPLICATION_ID:
            return
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        tables = {row[0] for row in conn.execute(_TABLES_SQL)}
    if app_id == 0 and (tables >= _ALP_TABLES or (not tables and version == 0)):
        return  # alp's from before V18, or an empty file
    what = (
        f"its application_id is {app_id:#x}"
        if app_id
        else f"it has none of alp's tables ({len(tables)} others"
        + (f", user_version {version}" if version else "")
        + ")"
    )
    raise DatabaseForeign(
        f"{path} is a SQLite database that is not alp's ({what}); alp leaves it as it is. "
        "Move it away if it is not needed there, or point ALP_HOME at another directory"
    )


_TABLES_SQL = "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"


async def _check_schema(conn: aiosqlite.Connection, path: Path) -> None:
    """A table or index gone (dropped by hand) fails here, not in every call later."""
    missing = missing_objects(list(await conn.execute_fetchall(SCHEMA_SQL)))
    if missing:
        raise DatabaseCorrupt(
            f"{path} is damaged: its schema lacks {', '.join(missing[:5])}; restore it from a "
            "backup, or move it aside to start afresh"
        )


async def _check_writable(conn: aiosqlite.Connection) -> None:
    """SQLite opens a file it may not write (a read-only file or mount) read-only without a
    word; a write that is rolled back makes it say SQLITE_READONLY now, not on every call."""
    async with conn.execute("PRAGMA user_version") as cursor:
        row = await cursor.fetchone()
    await conn.execute("BEGIN IMMEDIATE")
    try:
        await conn.execute(f"PRAGMA user_version = {int(row[0]) if row else 0}")
    finally:
        if conn.in_transaction:
            await conn.execute("ROLLBACK")


async def _bump_schema_version(conn: aiosqlite.Connection) -> None:
    """After an edit of sqlite_schema's text: connections re-read the schema."""
    async with conn.execute("PRAGMA schema_version") as cursor:
        row = await cursor.fetchone()
    await conn.execute(f"PRAGMA schema_version = {int(row[0]) + 1 if row else 1}")


async def _migrate(conn: aiosqlite.Connection) -> None:
    async with conn.execute("PRAGMA user_version") as cursor:
        row = await cursor.fetchone()
    version = int(row[0]) if row else 0
    if version > LATEST_VERSION:
        raise DatabaseTooNew(
            f"database schema version {version} is newer than this alpd knows "
            f"({LATEST_VERSION}); upgrade alp or point ALP_HOME elsewhere"
        )
    for number in range(version + 1, LATEST_VERSION + 1):
        await conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in MIGRATIONS[number - 1]:
                await conn.execute(statement)
            if any("sqlite_schema" in statement for statement in MIGRATIONS[number - 1]):
                await _bump_schema_version(conn)
            await conn.execute(f"PRAGMA user_version = {number}")
            await conn.execute("COMMIT")
        except BaseException:
            await conn.execute("ROLLBACK")
            raise


def store_url(environ: Mapping[str, str], configured: str | None) -> str | None:
    """The PostgreSQL URL alpd uses: `ALP_STORE_URL`, else `[store] url`; None for SQLite."""
    return environ.get("ALP_STORE_URL") or configured


async def open_store(home: Path, url: str | None) -> Store:
    """The store of one alpd: SQLite in `home` (the default), or the PostgreSQL database at
    `url` (`[store] url`, `ALP_STORE_URL`; docs/many-machines.md)."""
    if not url:
        return await Store.open(home / "alp.db")
    # imported only when configured: psycopg is not loaded by an alpd on SQLite
    from alpd.store.postgres.store import PostgresStore

    return await PostgresStore.connect(url)
