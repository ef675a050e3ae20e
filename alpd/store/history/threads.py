"""A thread's side of the history: its roots' copies (levels, entry counts, links) and its
document in the search index (title and context lines, `thread_docs`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from alpd.store.db import Store, Tx, dialect_of
from protocol import messages as m

__all__ = [
    "RootCopy",
    "ThreadDocSource",
    "ThreadHistoryRows",
    "replace_thread_doc",
    "stale_thread_docs",
    "thread_doc_source",
    "thread_history_rows",
]


class RootCopy(NamedTuple):
    """One root of a thread and the copy of its transcript."""

    execution_id: str
    status: str
    level: m.HistoryLevel | None
    skipped: int
    links_to: str | None
    link_kind: str | None
    entries: int


class ThreadHistoryRows(NamedTuple):
    """A thread's roots in order, and how many distinct entries its executions hold."""

    roots: list[RootCopy]
    entries: int


async def thread_history_rows(store: Store, thread_id: str) -> ThreadHistoryRows:
    rows = await store.fetchall(
        "SELECT e.id, e.status, e.history_level, e.history_skipped, c.links_to, "
        "c.link_kind, (SELECT count(*) FROM history_entries h WHERE h.execution_id = e.id) "
        "AS entries FROM executions e LEFT JOIN history_cursors c ON c.execution_id = e.id "
        "WHERE e.thread_id = ? AND e.is_root = 1 ORDER BY e.sequence",
        (thread_id,),
    )
    distinct = await store.fetchone(
        "SELECT count(DISTINCT h.native_id) FROM history_entries h JOIN executions e "
        "ON e.id = h.execution_id WHERE e.thread_id = ?",
        (thread_id,),
    )
    return ThreadHistoryRows([RootCopy(*row) for row in rows], int(distinct[0]) if distinct else 0)


@dataclass(frozen=True, slots=True)
class ThreadDocSource:
    """What a thread's search document is made of, and what the stored one was made from."""

    title: str | None
    updated_at: str
    #: the current context snapshot's body
    body: bytes | None
    #: the `updated_at` the stored document was made from (None: no document)
    indexed: str | None


async def thread_doc_source(store: Store, thread_id: str) -> ThreadDocSource | None:
    row = await store.fetchone(
        "SELECT t.title, t.context_revision, t.updated_at, s.body, d.source AS indexed "
        "FROM threads t LEFT JOIN snapshots s ON s.thread_id = t.id "
        "AND s.revision = t.context_revision LEFT JOIN thread_docs d ON d.thread_id = t.id "
        "WHERE t.id = ?",
        (thread_id,),
    )
    if row is None:
        return None
    body = bytes(row["body"]) if row["body"] is not None else None
    return ThreadDocSource(row["title"], row["updated_at"], body, row["indexed"])


async def replace_thread_doc(
    tx: Tx, thread_id: str, title: str | None, context: str, source: str
) -> None:
    """The thread's document, made from the thread as of `source` (its `updated_at`)."""
    await tx.execute("DELETE FROM thread_docs WHERE thread_id = ?", (thread_id,))
    await tx.execute(_INSERT_DOC[dialect_of(tx)], (thread_id, title, context, source))


#: a thread document's id, below every other (negative: entries have the positive ones); on
#: PostgreSQL from a sequence, since a person's role sees only their own documents' ids
_INSERT_DOC = {
    "sqlite": "INSERT INTO thread_docs (id, thread_id, title, context, source) VALUES ("
    "(SELECT coalesce(min(id), 0) - 1 FROM thread_docs), ?, ?, ?, ?)",
    "postgres": "INSERT INTO thread_docs (id, thread_id, title, context, source) VALUES ("
    "nextval('thread_doc_ids'), ?, ?, ?, ?)",
}


async def stale_thread_docs(store: Store, limit: int) -> list[str]:
    """Threads whose document is missing or older than the thread."""
    rows = await store.fetchall(
        "SELECT t.id FROM threads t LEFT JOIN thread_docs d ON d.thread_id = t.id "
        "WHERE d.source IS NOT t.updated_at LIMIT ?",
        (limit,),
    )
    return [r["id"] for r in rows]
