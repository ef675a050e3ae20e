"""LISTEN/NOTIFY for events across hosts (docs/many-machines.md, "Events across hosts").

`listen` holds a connection of its own (autocommit, outside the pool: a pooled connection is
another unit's a moment later, and a transaction-mode pooler would not keep a LISTEN) and
yields each payload on the channel as it arrives. `notify` sends a batch of payloads in one
statement on a pool connection, in a transaction of its own: not under the write lock (a
NOTIFY orders nothing), and not in a read (PostgreSQL refuses NOTIFY in a read-only one).

A lost connection or server is `DatabaseUnavailable`, so the caller (alpd.background) never
sees psycopg's classes; it reconnects with back-off.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

import anyio
import psycopg
from psycopg import sql

from alpd.domain.hosts.crossing import channel_for
from alpd.store.db import DatabaseUnavailable, Store
from alpd.store.postgres.store import PostgresStore, redacted

__all__ = ["channel_of", "listen", "notify"]


def _postgres(store: Store) -> PostgresStore:
    if not isinstance(store, PostgresStore):
        raise TypeError("events cross hosts only on a PostgreSQL store")
    return store


async def channel_of(store: Store) -> str:
    """The channel of the role this alpd connects as (`crossing.channel_for`)."""
    row = await store.fetchone("SELECT current_user")
    role = str(row[0]) if row is not None else ""
    return channel_for(role, hashlib.sha256(role.encode()).hexdigest())


async def listen(store: Store, channel: str) -> AsyncIterator[str | None]:
    """None once listening, then every payload NOTIFYed on `channel` from then on, in the
    order their transactions committed, until the connection is lost (`DatabaseUnavailable`)
    or the caller stops. TCP keepalives find a silently lost server within a minute."""
    url = _postgres(store).url
    try:
        conn = await psycopg.AsyncConnection.connect(
            url,
            autocommit=True,
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
    """NOTIFY each of `payloads` on `channel`, in order, in one transaction."""
    pg = _postgres(store)
    await anyio.to_thread.run_sync(_notify_now, pg, channel, list(payloads))


def _notify_now(store: PostgresStore, channel: str, payloads: list[str]) -> None:
    conn: psycopg.Connection[Any] = store._getconn()
    try:
        conn.execute(
            "SELECT pg_notify(%s, p.payload) FROM unnest(%s::text[]) WITH ORDINALITY "
            "AS p(payload, n) ORDER BY p.n",
            (channel, payloads),
        )
        conn.commit()
    except psycopg.Error as exc:
        raise DatabaseUnavailable(f"{store.path}: cannot send events ({exc})") from exc
    finally:
        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            with contextlib.suppress(psycopg.Error):
                conn.rollback()
        store._pool.putconn(conn)
