"""What `daemon/status` counts: the caller's threads and executions, and the history entries."""

from __future__ import annotations

from alpd.store.db import Store
from protocol import messages as m


async def daemon_counts(store: Store, owner_uid: int) -> m.Counts:
    # count(*) FILTER, not sum(a comparison): PostgreSQL does not sum booleans
    threads = await store.fetchone(
        "SELECT count(*) AS threads, count(*) FILTER (WHERE status = 'open') AS open FROM threads "
        "WHERE owner_uid = ?",
        (owner_uid,),
    )
    executions = await store.fetchone(
        "SELECT count(*) AS n, count(*) FILTER (WHERE status != 'settled') AS running "
        "FROM executions WHERE owner_uid = ?",
        (owner_uid,),
    )
    # Entries are never deleted or updated, so the largest id counts them in O(log n).
    entries = await store.fetchone("SELECT coalesce(max(id), 0) FROM history_entries")
    return m.Counts(
        threads=threads["threads"] if threads else 0,
        open_threads=threads["open"] if threads else 0,
        executions=executions["n"] if executions else 0,
        running=executions["running"] if executions else 0,
        history_entries=int(entries[0]) if entries else 0,
    )


__all__ = ["daemon_counts"]
