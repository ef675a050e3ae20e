"""History entries labelled by clear and undo, and the entries a recap may read.

History is never edited by a clear or an undo: an entry's labels are read, at query time,
through the thread's steps (`context_steps`), by the rule of
`alpd.domain.threads.steering.labels_of`:

* `before-clear` — the entry's root (a delegated child's entries count as its root's) opened
  on a context revision older than a clear of its thread;
* `undone` — its root's contribution was undone.

Labelled entries stay searchable (`history/search` returns the labels with each hit); a recap
reads only unlabelled ones (`recap_entries`). Entries copied into a fork or resume (`copy_of`)
hold no text of their own and are skipped: the original is read, with its own root's labels.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Final

from alpd.services.history.search import STORED_COLUMNS_SQL, check_entry_digests
from alpd.store.db import Store
from alpd.store.steps import labels_sql

__all__ = ["MAX_RECAP_ENTRIES", "RecapEntry", "recap_entries"]

#: the most entries one `recap_entries` call returns
MAX_RECAP_ENTRIES: Final = 10_000


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


_RECAP_SQL: Final = f"""
SELECT * FROM (
    SELECT h.id AS entry_id, h.execution_id, e.root_id, r.sequence, h.role, h.kind, h.text,
        h.tool_name, h.tool_input, h.output_tail, h.ts, h.digest,
        (SELECT since FROM history_digests) AS digests_since,
        {STORED_COLUMNS_SQL},
        {labels_sql("e.root_id")}
    FROM executions e
    JOIN executions r ON r.id = e.root_id
    JOIN history_entries h ON h.execution_id = e.id
    WHERE e.thread_id = ?1 AND h.id > ?2 AND h.copy_of IS NULL
) WHERE NOT before_clear AND NOT undone
"""


async def recap_entries(
    store: Store,
    thread_id: str,
    *,
    after_id: int = 0,
    limit: int = 1000,
    newest: bool = False,
) -> list[RecapEntry]:
    """The thread's history entries a recap may read — never before a clear, never undone —
    with ids above `after_id`, oldest first: the first `limit` of them, or with `newest` the
    last `limit`. Each is re-hashed first (HISTORY_ENTRY_TAMPERED when it was edited).
    `limit` is capped at `MAX_RECAP_ENTRIES`."""
    limit = max(0, min(limit, MAX_RECAP_ENTRIES))
    sql = f"{_RECAP_SQL} ORDER BY entry_id {'DESC' if newest else 'ASC'} LIMIT ?3"

    def read(conn: sqlite3.Connection) -> list[RecapEntry]:
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

    entries = await store.read(read)
    return entries[::-1] if newest else entries
