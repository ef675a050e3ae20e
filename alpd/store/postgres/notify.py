"""LISTEN/NOTIFY for events across hosts (docs/many-machines.md, "Events across hosts").

`listen` holds a connection of its own (autocommit, outside the pool: a pooled connection is
another unit's a moment later, and a transaction-mode pooler would not keep a LISTEN) and
yields each payload on the channel as it arrives. `notify` sends a batch of payloads on a pool
connection, in a transaction of its own: not under the write lock (it orders no write), and
not in a read (PostgreSQL refuses NOTIFY in a read-only one).

So that a host whose LISTEN connection was down can read what it missed, `notify` first keeps
each payload in `event_log` under a number (`seq`) and NOTIFYs it stamped with that number
(`crossing.stamped`). The transaction takes a lock of its own (`NOTIFY_LOCK`, a transaction-
level advisory lock, not the writers'): notifiers run one at a time, so numbers are handed out
in the order their transactions commit, and a reader that sees number n has every number
below it that it will ever see. `missed_since(n)` reads them back; each notify drops the rows
older than the newest `KEEP`.

A lost connection or server is `DatabaseUnavailable`, so the caller (alpd.background) never
sees psycopg's classes; it reconnects with back-off.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
from collections.abc import AsyncIterator, Sequence
from typing import Any, Final

import anyio
import psycopg
from psycopg import sql

from alpd.domain.hosts.crossing import channel_for, stamped
from alpd.store.db import DatabaseUnavailable, Store
from alpd.store.postgres.store import PostgresStore, redacted

__all__ = ["KEEP", "NOTIFY_LOCK", "channel_of", "listen", "missed_since", "newest", "notify"]

#: the key of the advisory lock a notifying transaction takes ("alp\0n")
NOTIFY_LOCK: Final = 0x616C7000_6E
#: rows of `event_log` kept (a person's newest): more than a host replays (`event_relay.REPLAY`)
KEEP: Final = 4096


def _postgres(store: Store) -> PostgresStore:
    if not isinstance(store, PostgresStore):
        raise TypeError("events cross hosts only on a PostgreSQL store")
    return store


async def channel_of(store: Store) -> str:
    """The channel of the role this alpd connects as (`crossing.channel_for`)."""
    row = await store.fetchone("SELECT current_user")
    role = str(row[0]) if row is not None else ""
    return channel_for(role, hashlib.sha256(role.encode()).hexdigest())


async def listen(store: Store, channel: str, host_name: str) -> AsyncIterator[str | None]:
    """None once listening, then every payload NOTIFYed on `channel` from then on, in the
    order their transactions committed, until the connection is lost (`DatabaseUnavailable`)
    or the caller stops. TCP keepalives find a silently lost server within a minute. The
    connection is named `alpd events HOST_NAME` (`pg_stat_activity.application_name`)."""
    url = _postgres(store).url
    try:
        conn = await psycopg.AsyncConnection.connect(
            url,
            autocommit=True,
            application_name=f"alpd events {host_name}"[:63],
            prepare_threshold=None,
            connect_timeout=10,
            keepalives=1,
            keepalives_idle=20,
            keepalives_interval=10,
            keepalives_count=3,
        )
    except psycopg.Error as exc:
        raise DatabaseUnavailable(f"{redacted(url)}: cannot listen for events ({exc})") from exc
    try:
        await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
        yield None
        async for note in conn.notifies():
            yield note.payload
    except psycopg.Error as exc:
        raise DatabaseUnavailable(f"{redacted(url)}: events connection lost ({exc})") from exc
    finally:
        with anyio.CancelScope(shield=True):
            await conn.close()


async def notify(store: Store, channel: str, payloads: Sequence[str]) -> None:
    """Keep each of `payloads` in `event_log` and NOTIFY it on `channel` stamped with its
    number, in order, in one transaction."""
    pg = _postgres(store)
    await anyio.to_thread.run_sync(_notify_now, pg, channel, list(payloads))


async def newest(store: Store) -> int:
    """The number of the newest reference kept (0 if none): where a host starts listening."""
    try:
        row = await store.fetchone("SELECT coalesce(max(seq), 0) FROM event_log")
    except sqlite3.Error as exc:  # a statement's error, as the store raises them
        raise DatabaseUnavailable(f"{store.path}: cannot read the events' log ({exc})") from exc
    return int(row[0]) if row is not None else 0


async def missed_since(store: Store, seq: int, most: int) -> list[tuple[int, str]]:
    """The newest `most` references kept after number `seq`, oldest first, as (number,
    payload); `most + 1` of them said more were missed than are read."""
    try:
        rows = await store.fetchall(
            "SELECT seq, payload FROM event_log WHERE seq > ? ORDER BY seq DESC LIMIT ?",
            (seq, most + 1),
        )
    except sqlite3.Error as exc:
        raise DatabaseUnavailable(f"{store.path}: cannot read the events' log ({exc})") from exc
    return [(int(row[0]), str(row[1])) for row in reversed(rows)]


def _notify_now(store: PostgresStore, channel: str, payloads: list[str]) -> None:
    conn: psycopg.Connection[Any] = store._getconn()
    try:
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (NOTIFY_LOCK,))
        kept = conn.execute(
            "INSERT INTO event_log (payload) SELECT p.payload FROM unnest(%s::text[]) "
            "WITH ORDINALITY AS p(payload, n) ORDER BY p.n RETURNING seq, payload",
            (payloads,),
        ).fetchall()
        kept.sort()
        conn.execute(
            "SELECT pg_notify(%s, p.payload) FROM unnest(%s::text[]) WITH ORDINALITY "
            "AS p(payload, n) ORDER BY p.n",
            (channel, [stamped(payload, seq) for seq, payload in kept]),
        )
        conn.execute("DELETE FROM event_log WHERE seq <= %s", (kept[-1][0] - KEEP,))
        conn.commit()
    except psycopg.Error as exc:
        raise DatabaseUnavailable(f"{store.path}: cannot send events ({exc})") from exc
    finally:
        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            with contextlib.suppress(psycopg.Error):
                conn.rollback()
        store._pool.putconn(conn)
