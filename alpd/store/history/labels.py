"""The history entries a recap may read: none labelled by a clear or an undo
(`alpd.store.threads.steps.labels_sql`), none a copy (`copy_of`: the original is read, with its own
root's labels), each re-hashed before it is returned (`check_entry_digests`). An adopted root
(`thread/adopt`) reads the entries of the imported session it was adopted from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from alpd.store.db import BlockingTx, Store
from alpd.store.history.search import STORED_COLUMNS_SQL, check_entry_digests
from alpd.store.threads.steps import labels_sql

__all__ = ["RecapEntry", "readable_entries", "recap_sql"]


@dataclass(frozen=True, slots=True)
class RecapEntry:
    """One history entry a recap may read (stored text, already secret-filtered)."""

    id: int
    execution_id: str
    root_id: str
    #: the root's sequence in its thread
    sequence: int
    role: str
    kind: str
    text: str | None
    tool_name: str | None
    tool_input: str | None
    output_tail: str | None
    ts: str | None


#: Which entries each execution of the thread reads (its own, or an adopted root's session's)
#: is worked out in a subquery kept apart (`LIMIT -1 OFFSET 0`: neither engine flattens it),
#: so the entries are joined on a plain column. On PostgreSQL under row-level security a join
#: condition calling a function that is not LEAKPROOF (`json_extract`) is never an index
#: condition: the entries were read whole once per execution of the thread (a thread of 20
#: roots over 30 MB of history: 369 ms, against 1 ms through `history_by_execution`).
_RECAP_SQL: Final = f"""
SELECT * FROM (
    SELECT h.id AS entry_id, h.execution_id, e.root_id, r.sequence, h.role, h.kind, h.text,
        h.tool_name, h.tool_input, h.output_tail, h.ts, h.digest,
        (SELECT since FROM history_digests) AS digests_since,
        {STORED_COLUMNS_SQL},
        {labels_sql("e.root_id")}
    FROM (
        SELECT root_id, coalesce(json_extract(origin, '$.adoptedFrom'), id) AS reads
        FROM executions WHERE thread_id = ?1 LIMIT -1 OFFSET 0
    ) AS e
    JOIN executions r ON r.id = e.root_id
    JOIN history_entries h ON h.execution_id = e.reads
    WHERE h.id > ?2 AND h.copy_of IS NULL
) AS labelled WHERE NOT before_clear AND NOT undone
"""


def recap_sql(*, newest: bool) -> str:
    """The statement of `readable_entries` (?1 the thread, ?2 the id after, ?3 the limit)."""
    return f"{_RECAP_SQL} ORDER BY entry_id {'DESC' if newest else 'ASC'} LIMIT ?3"


async def readable_entries(
    store: Store, thread_id: str, *, after_id: int, limit: int, newest: bool
) -> list[RecapEntry]:
    """The thread's readable entries with ids above `after_id`: the first `limit` of them
    by id, or with `newest` the last `limit` (newest first). One hop to the reader's
    thread; HISTORY_ENTRY_TAMPERED when one was edited."""
    sql = recap_sql(newest=newest)

    def read(conn: BlockingTx) -> list[RecapEntry]:
        # On the reader's thread with the query: re-hashing up to 10,000 entries must not
        # hold the event loop.
        rows = conn.execute(sql, (thread_id, after_id, limit)).fetchall()
        check_entry_digests(rows)
        return [
            RecapEntry(
                id=row["entry_id"],
                execution_id=row["execution_id"],
                root_id=row["root_id"],
                sequence=row["sequence"],
                role=row["role"],
                kind=row["kind"],
                text=row["text"],
                tool_name=row["tool_name"],
                tool_input=row["tool_input"],
                output_tail=row["output_tail"],
                ts=row["ts"],
            )
            for row in rows
        ]

    return await store.read(read)
