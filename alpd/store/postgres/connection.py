"""A psycopg connection dressed as the sqlite3 / aiosqlite connection the store modules use.

The store modules were written against sqlite3 (`conn.execute(sql, params).fetchone()`) and
aiosqlite (`await tx.execute(…)`, `async with tx.execute(…) as cursor`, `execute_fetchall`,
`executemany`); `SqliteLike` and `AsyncSqliteLike` give them the same few calls over one
psycopg connection, each statement through `alpd.store.postgres.dialect.translate`. Rows are
`PgRow`s: by index and by column name, like `sqlite3.Row`.

Errors are translated at this boundary to sqlite3's classes (a unique or check violation, or
a trigger's refusal, is `sqlite3.IntegrityError`; anything else `sqlite3.DatabaseError`), so
the store modules' `except sqlite3.IntegrityError` (`THREAD_BUSY` from the one-unsettled-root
index) means the same on both backends.

The async face runs each call of the blocking connection on a worker thread (one hop per
call, as aiosqlite does); `_execute(fn, *args)` runs `fn(the SqliteLike, …)` there, which is
what `alpd.store.db.on_thread` asks of a connection.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Coroutine, Generator, Iterable, Iterator, Sequence
from decimal import Decimal
from typing import Any, TypeVar

import anyio
import psycopg
from psycopg import errors as pg_errors
from psycopg.adapt import Dumper, Loader

from alpd.store.postgres.dialect import translate
from alpd.store.postgres.persons import OWNER_COLUMN

__all__ = [
    "AsyncPgCursor",
    "AsyncSqliteLike",
    "InlineSqliteLike",
    "PgCursor",
    "PgRow",
    "SqliteLike",
    "UnitSuspended",
    "configure",
    "run_whole",
]

T = TypeVar("T")


class PgRow(Sequence[Any]):
    """One row: `row[0]`, `row["name"]`, `row.keys()`, iteration over the values."""

    __slots__ = ("_names", "_values")

    def __init__(self, names: dict[str, int], values: tuple[Any, ...]):
        self._names = names
        self._values = values

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return self._values[self._names[key]]
        return self._values[key]

    def __len__(self) -> int:
        return len(self._values)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def keys(self) -> list[str]:
        return list(self._names)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PgRow):
            return self._values == other._values
        return self._values == other

    def __hash__(self) -> int:
        return hash(self._values)

    def __repr__(self) -> str:
        return f"PgRow({dict(zip(self._names, self._values, strict=True))!r})"


def _row_factory(cursor: psycopg.Cursor[Any]) -> Callable[[Sequence[Any]], PgRow]:
    columns = [column.name for column in cursor.description or ()]
    if OWNER_COLUMN in columns:
        # The person a row belongs to is the database's business (row-level security,
        # `alpd.store.postgres.persons`): a `SELECT *` reads the columns SQLite has.
        keep = [i for i, name in enumerate(columns) if name != OWNER_COLUMN]
        names = {columns[i]: n for n, i in enumerate(keep)}
        return lambda values: PgRow(names, tuple(values[i] for i in keep))
    names = {name: i for i, name in enumerate(columns)}
    return lambda values: PgRow(names, tuple(values))


class _BoolAsInt(Dumper):
    """SQLite has no booleans: the store passes True/False to INTEGER columns."""

    oid = psycopg.adapters.types["int8"].oid

    def dump(self, obj: Any) -> bytes:
        return b"1" if obj else b"0"


class _NumericAsNumber(Loader):
    """`sum()` of integers is numeric in PostgreSQL: give back an int (or a float), as SQLite."""

    def load(self, data: Any) -> int | float:
        value = Decimal(bytes(data).decode())
        return int(value) if value == value.to_integral_value() else float(value)


def configure(conn: psycopg.Connection[Any]) -> None:
    """The adapters every connection of the store gets (the pool's `configure`)."""
    conn.adapters.register_dumper(bool, _BoolAsInt)
    conn.adapters.register_loader("numeric", _NumericAsNumber)


def _translated_error(exc: psycopg.Error) -> sqlite3.Error:
    if isinstance(exc, pg_errors.IntegrityError | pg_errors.RaiseException):
        return sqlite3.IntegrityError(str(exc))
    return sqlite3.DatabaseError(str(exc))


class PgCursor:
    """The part of `sqlite3.Cursor` the store uses, over rows already fetched."""

    def __init__(self, rows: list[PgRow], rowcount: int, lastrowid: int | None):
        self._rows = rows
        self._next = 0
        self.rowcount = rowcount
        self.lastrowid = lastrowid

    def fetchone(self) -> PgRow | None:
        if self._next >= len(self._rows):
            return None
        self._next += 1
        return self._rows[self._next - 1]

    def fetchall(self) -> list[PgRow]:
        rest = self._rows[self._next :]
        self._next = len(self._rows)
        return rest

    def __iter__(self) -> Iterator[PgRow]:
        return iter(self.fetchall())


class AsyncPgCursor:
    """aiosqlite's cursor over a `PgCursor` (its rows are fetched already)."""

    def __init__(self, cursor: PgCursor):
        self._cursor = cursor
        self.rowcount = cursor.rowcount
        self.lastrowid = cursor.lastrowid

    async def fetchone(self) -> PgRow | None:
        return self._cursor.fetchone()

    async def fetchall(self) -> list[PgRow]:
        return self._cursor.fetchall()

    def __aiter__(self) -> AsyncPgCursor:
        return self

    async def __anext__(self) -> PgRow:
        row = self._cursor.fetchone()
        if row is None:
            raise StopAsyncIteration
        return row


def _params(numbered: bool, params: Iterable[Any] | None) -> Any:
    values = tuple(params or ())
    if numbered:
        return {f"p{i}": value for i, value in enumerate(values, start=1)}
    return values


class SqliteLike:
    """`sqlite3.Connection`'s `execute` / `executemany` over one psycopg connection."""

    dialect = "postgres"

    def __init__(self, conn: psycopg.Connection[Any], begin: str | None = None):
        self.pg = conn
        #: a BEGIN sent in front of the first statement, in the same message (a read's: one
        #: round trip fewer, on an autocommit connection that sends no BEGIN of its own)
        self._begin = begin

    def execute(self, sql: str, params: Iterable[Any] | None = None) -> PgCursor:
        return self._execute(sql, params, None)

    def execute_alone(self, sql: str, params: Iterable[Any] | None, begin: str) -> PgCursor:
        """`sql` as the whole of a transaction begun by `begin`: the BEGIN, the statement and
        the COMMIT in one message, one round trip (on an autocommit connection)."""
        self._begin = begin
        return self._execute(sql, params, "COMMIT")

    def _execute(self, sql: str, params: Iterable[Any] | None, end: str | None) -> PgCursor:
        statement, numbered = translate(sql)
        begin, self._begin = self._begin, None
        try:
            with self.pg.cursor(row_factory=_row_factory) as cursor:
                if begin is None:
                    cursor.execute(statement, _params(numbered, params))
                else:
                    # one simple-protocol message, a result each: the BEGIN's, the query's
                    # (and the COMMIT's, after it)
                    whole = f"{begin}; {statement}" + (f"; {end}" if end else "")
                    cursor.execute(whole, _params(numbered, params))
                    cursor.nextset()
                rows = cursor.fetchall() if cursor.description is not None else []
                rowcount = cursor.rowcount
        except psycopg.Error as exc:
            raise _translated_error(exc) from exc
        lastrowid = rows[0][0] if rows and len(rows[0]) == 1 else None
        return PgCursor(rows, rowcount, lastrowid if isinstance(lastrowid, int) else None)

    def executemany(self, sql: str, seq: Iterable[Iterable[Any]]) -> PgCursor:
        statement, numbered = translate(sql)
        begin, self._begin = self._begin, None
        if begin is not None:
            self.pg.execute(begin)
        batch = [_params(numbered, params) for params in seq]
        if not batch:
            return PgCursor([], 0, None)
        try:
            with self.pg.cursor() as cursor:
                cursor.executemany(statement, batch)
                rowcount = cursor.rowcount
        except psycopg.Error as exc:
            raise _translated_error(exc) from exc
        return PgCursor([], rowcount, None)

    def create_function(self, *args: Any, **kwargs: Any) -> None:
        """SQLite's Python functions are SQL functions of the PostgreSQL schema already."""


class _Pending:
    """What `AsyncSqliteLike.execute` returns: awaited, or entered with `async with`."""

    def __init__(self, run: Callable[[], PgCursor]):
        self._run = run

    def __await__(self) -> Any:
        return self._cursor().__await__()

    async def _cursor(self) -> AsyncPgCursor:
        return AsyncPgCursor(await anyio.to_thread.run_sync(self._run))

    async def __aenter__(self) -> AsyncPgCursor:
        return await self._cursor()

    async def __aexit__(self, *exc: object) -> None:
        return None


class AsyncSqliteLike:
    """aiosqlite's face of a `SqliteLike`: each call one hop to a worker thread."""

    dialect = "postgres"

    def __init__(self, conn: SqliteLike):
        self._conn = conn
        self.in_transaction = True

    def execute(self, sql: str, params: Iterable[Any] | None = None) -> _Pending:
        return _Pending(lambda: self._conn.execute(sql, params))

    async def execute_fetchall(self, sql: str, params: Iterable[Any] | None = None) -> list[PgRow]:
        cursor = await anyio.to_thread.run_sync(self._conn.execute, sql, params)
        return cursor.fetchall()

    async def executemany(self, sql: str, seq: Iterable[Iterable[Any]]) -> AsyncPgCursor:
        batch = list(seq)
        return AsyncPgCursor(await anyio.to_thread.run_sync(self._conn.executemany, sql, batch))

    async def _execute(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await anyio.to_thread.run_sync(lambda: fn(*args, **kwargs))


class _Done:
    """An awaitable whose value is there already: awaiting it (or entering it with `async
    with`) never suspends."""

    def __init__(self, value: Any):
        self._value = value

    def __await__(self) -> Generator[Any, None, Any]:
        return self._value
        yield  # a generator function that returns before its first yield

    async def __aenter__(self) -> Any:
        return self._value

    async def __aexit__(self, *exc: object) -> None:
        return None


class InlineSqliteLike:
    """aiosqlite's face of a `SqliteLike` whose every call is done when it returns, for a unit
    run whole on one worker thread (`run_whole`): a read of several statements pays one hop,
    not one per statement."""

    dialect = "postgres"

    def __init__(self, conn: SqliteLike):
        self._conn = conn
        self.in_transaction = True

    def execute(self, sql: str, params: Iterable[Any] | None = None) -> _Done:
        return _Done(AsyncPgCursor(self._conn.execute(sql, params)))

    async def execute_fetchall(self, sql: str, params: Iterable[Any] | None = None) -> list[PgRow]:
        return self._conn.execute(sql, params).fetchall()

    async def executemany(self, sql: str, seq: Iterable[Iterable[Any]]) -> AsyncPgCursor:
        return AsyncPgCursor(self._conn.executemany(sql, list(seq)))

    async def _execute(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return fn(*args, **kwargs)


class UnitSuspended(RuntimeError):
    """A unit run by `run_whole` awaited something that is not done at once (not one of its
    connection's statements): it cannot run whole on a worker thread."""


def run_whole(unit: Callable[[Any], Coroutine[Any, Any, T]], tx: InlineSqliteLike) -> T:
    """`unit(tx)` to its end on the calling thread, without an event loop: every await in it
    is one of `tx`'s calls, done already, so the coroutine finishes at its first step."""
    coroutine = unit(tx)
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coroutine.close()
    raise UnitSuspended("a read unit awaited something other than its statements")
