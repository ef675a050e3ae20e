"""A thread's rows out to a bundle and back in (`thread/export`, `thread/import`).

Export (`export_thread`, on the reader's thread): one read transaction, so every table is
read at the same moment of the database; the rows go to `emit` one at a time, table by table
in `alpd.domain.bundles.format.TABLES` order, never all in memory. A thread with an unsettled
root is THREAD_BUSY: a running root's process is this host's, and its rows are still moving.

What is the thread's: its row and revisions, its snapshots, compactions and context steps,
its executions (roots, delegated children, the recap's runs) and the imported sessions its
adopted roots read (`origin.adoptedFrom`), their checkpoints, derived sections and memory
digests, their history entries, its deliveries (but the queued ones: those belong to the
host that will deliver them), its reports, and the handoffs it sent or received. A history
entry stored as a copy of another thread's entry is written out whole (its text read from
the original, both digests checked first, its digest recomputed over what is written).

Import (`BundleImporter`, on the writer's thread inside one `write_blocking` unit): each
record inserted as it comes. The thread's id and every execution's and handoff's id are
kept (they are time + random: a collision means the same thing or a conflict, never
chance); the integer ids of this database (history entries, deliveries, reports) are given
afresh and the references to them followed. Owner columns become the importing person's.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import Final, NamedTuple

from alpd.errors import BundleConflict, BundleInvalid, BundleTampered, ThreadBusy, ThreadNotFound
from alpd.store.db import BlockingTx, dialect_of
from alpd.store.entry_rows import (
    DIGESTED_COLUMNS,
    EntryRow,
    Value,
    entry_content,
    entry_digest,
    row_of,
)
from alpd.store.history.entries import insert_entries

__all__ = ["BundleImporter", "Row", "StoredThread", "export_thread", "stored_thread"]

Row = dict[str, "Value | float | bytes"]
Emit = Callable[[str, Row], None]

#: the executions of thread ?1: its own, and the imported sessions its adopted roots read
_EXECUTIONS: Final = (
    "SELECT id FROM executions WHERE thread_id = ?1 UNION "
    "SELECT json_extract(origin, '$.adoptedFrom') FROM executions "
    "WHERE thread_id = ?1 AND is_root = 1 AND json_extract(origin, '$.adoptedFrom') IS NOT NULL"
)
_IN_EXECUTIONS: Final = "execution_id IN (SELECT value FROM json_each(?2))"

#: table -> the statement reading the thread's rows (?1 the thread, ?2 its executions)
_READS: Final = {
    "threads": "SELECT * FROM threads WHERE id = ?1",
    "thread_revisions": "SELECT * FROM thread_revisions WHERE thread_id = ?1 ORDER BY revision",
    "snapshots": "SELECT * FROM snapshots WHERE thread_id = ?1 ORDER BY revision",
    "compactions": "SELECT * FROM compactions WHERE thread_id = ?1 ORDER BY revision",
    "context_steps": "SELECT * FROM context_steps WHERE thread_id = ?1 ORDER BY revision",
    "executions": "SELECT * FROM executions WHERE id IN (SELECT value FROM json_each(?2)) "
    "ORDER BY created_at, id",
    "checkpoints": f"SELECT * FROM checkpoints WHERE {_IN_EXECUTIONS} ORDER BY execution_id",
    "root_derived": f"SELECT * FROM root_derived WHERE {_IN_EXECUTIONS} ORDER BY execution_id",
    "root_memories": f"SELECT * FROM root_memories WHERE {_IN_EXECUTIONS} ORDER BY execution_id",
    "history_entries": "SELECT id, " + ", ".join(DIGESTED_COLUMNS) + ", digest "
    f"FROM history_entries WHERE {_IN_EXECUTIONS} ORDER BY id",
    "deliveries": "SELECT * FROM deliveries WHERE thread_id = ?1 AND status != 'queued' "
    "ORDER BY id",
    "reports": "SELECT * FROM reports WHERE thread_id = ?1 ORDER BY id",
    "handoffs": "SELECT * FROM handoffs WHERE source_thread_id = ?1 OR target_thread_id = ?1 "
    "ORDER BY created_at, id",
}

_ENTRY_BY_ID: Final = (
    "SELECT " + ", ".join(DIGESTED_COLUMNS) + ", digest FROM history_entries WHERE id = ?"
)


def export_thread(conn: BlockingTx, thread_id: str, tables: Sequence[str], emit: Emit) -> None:
    """Emit the thread's rows, table by table in `tables`' order, from one read transaction
    (module docstring). THREAD_NOT_FOUND, THREAD_BUSY (a root still runs)."""
    conn.execute("BEGIN")
    try:
        if conn.execute("SELECT 1 FROM threads WHERE id = ?", (thread_id,)).fetchone() is None:
            raise ThreadNotFound(f"no thread {thread_id!r}", threadId=thread_id)
        busy = conn.execute(
            "SELECT id FROM executions WHERE thread_id = ? AND is_root = 1 "
            "AND status != 'settled' LIMIT 1",
            (thread_id,),
        ).fetchone()
        if busy is not None:
            raise ThreadBusy(
                f"thread {thread_id} has a running root ({busy[0]}); export it once it has "
                "settled (a run's processes cannot move with its thread)",
                threadId=thread_id,
                busyRoot=busy[0],
            )
        ids = frozenset(row[0] for row in conn.execute(_EXECUTIONS, (thread_id,)))
        executions = json.dumps(sorted(ids))
        for table in tables:
            sql = _READS[table]
            params = (thread_id, executions) if "?2" in sql else (thread_id,)
            for row in conn.execute(sql, params):
                values: Row = {key: row[key] for key in row.keys()}  # noqa: SIM118 - a sqlite3.Row
                if table == "history_entries":
                    values = _whole_entry(conn, values, ids)
                emit(table, values)
    finally:
        conn.execute("COMMIT")


def _whole_entry(conn: BlockingTx, entry: Row, executions: frozenset[str]) -> Row:
    """An entry as the bundle carries it: a copy of an entry outside the thread's executions
    is written whole (module docstring); an entry from before entry digests gets one."""
    if entry["digest"] is None:
        entry["digest"] = _digest_of(entry)
    original_id = entry["copy_of"]
    if original_id is None:
        return entry
    original = conn.execute(_ENTRY_BY_ID, (original_id,)).fetchone()
    if original is not None and original["execution_id"] in executions:
        return entry
    if original is None:
        raise BundleInvalid(f"history entry {entry['id']!r} copies entry {original_id!r}, gone")
    source = {key: original[key] for key in original.keys()}  # noqa: SIM118 - a sqlite3.Row
    for checked in (entry, source):
        if checked["digest"] is not None and checked["digest"] != _digest_of(checked):
            raise BundleTampered(
                f"history entry {entry['id']!r} (or the entry it copies) no longer matches "
                "its digest in this database; nothing was exported",
                what="history_entries",
            )
    whole = dict(entry)
    for column in ("text", "tool_input", "output_tail", "usage"):
        whole[column] = source[column]
    whole["copy_of"] = None
    whole["digest"] = _digest_of(whole)
    return whole


def _digest_of(entry: Row) -> str:
    values = [entry[column] for column in DIGESTED_COLUMNS]
    return entry_digest(entry_content(values))  # type: ignore[arg-type]


class StoredThread(NamedTuple):
    revision: int
    context_revision: int
    head_digest: str | None


def stored_thread(conn: BlockingTx, thread_id: str) -> StoredThread | None:
    """The thread's revision, context revision and head digest here, if it is here."""
    row = conn.execute(
        "SELECT t.revision, t.context_revision, s.digest FROM threads t LEFT JOIN snapshots s "
        "ON s.thread_id = t.id AND s.revision = t.context_revision WHERE t.id = ?",
        (thread_id,),
    ).fetchone()
    return None if row is None else StoredThread(row[0], row[1], row[2])


#: how many history entries go to `insert_entries` at once
_ENTRY_BATCH: Final = 1000
#: the tables whose integer id is this database's: given afresh on import
_FRESH_IDS: Final = frozenset({"deliveries", "reports"})
_OWNED: Final = frozenset({"threads", "executions", "deliveries", "reports", "handoffs"})


class BundleImporter:
    """Inserts one bundle's records into the writer's transaction (module docstring)."""

    def __init__(self, conn: BlockingTx, thread_id: str, owner_uid: int) -> None:
        self.conn = conn
        self.thread_id = thread_id
        self.owner_uid = owner_uid
        self._columns: dict[str, frozenset[str]] = {}
        self._entries: list[EntryRow] = []
        self._entry_ids: set[int] = set()
        self._deliveries: dict[int, int] = {}
        #: what was kept out, and why (for the caller)
        self.left_out: list[str] = []

    def insert(self, table: str, row: Row) -> None:
        """Insert one record (BUNDLE_CONFLICT when this database refuses it: an id or a
        unique key taken here, a reference to a row that is not here)."""
        try:
            self._insert_record(table, dict(row))
        except sqlite3.IntegrityError as exc:
            raise BundleConflict(
                f"a {table} record of the bundle cannot be stored here ({exc}); nothing was "
                "imported",
                table=table,
            ) from exc

    def _insert_record(self, table: str, row: Row) -> None:
        self._check_columns(table, row)
        if table != "history_entries":
            self.flush()
        if table in _OWNED:
            row["owner_uid"] = self.owner_uid
        if table == "history_entries":
            self._entry(row)
        elif table == "executions":
            self._insert_new(table, row, f"execution {row['id']!r}")
        elif table == "handoffs":
            self._handoff(row)
        elif table in _FRESH_IDS:
            old = row.pop("id")
            if table == "deliveries":
                row["from_thread_id"] = self._known_thread(row.get("from_thread_id"))
            new = self._insert(table, row, returning_id=True)
            if table == "deliveries" and isinstance(old, int):
                self._deliveries[old] = new
        else:
            self._insert(table, row)

    def flush(self) -> None:
        """Insert the history entries batched so far (and index them)."""
        if self._entries:
            insert_entries(self.conn, self._entries)
            self._entries = []

    def _entry(self, row: Row) -> None:
        entry_id, copy_of = row.get("id"), row.get("copy_of")
        if not isinstance(entry_id, int) or entry_id in self._entry_ids:
            raise BundleInvalid(f"a history entry without an id of its own ({entry_id!r})")
        if copy_of is not None and copy_of not in self._entry_ids:
            raise BundleInvalid(f"history entry {entry_id!r} copies {copy_of!r}, not before it")
        self._entry_ids.add(entry_id)
        # A copy's text is its original's, inserted before it: `insert_entries` finds the
        # original by its native id and stores this one as a copy of it again.
        values = [row.get(column) for column in DIGESTED_COLUMNS[:-1]]
        self._entries.append(row_of(values))  # type: ignore[arg-type]
        if len(self._entries) >= _ENTRY_BATCH:
            self.flush()

    def _handoff(self, row: Row) -> None:
        others = {row.get("source_thread_id"), row.get("target_thread_id")} - {self.thread_id}
        missing = [other for other in others if self._known_thread(other) is None]
        if missing:
            self.left_out.append(
                f"handoff {row['id']!r}: thread {missing[0]!r} is not on this host "
                "(import it first, then import this bundle again)"
            )
            return
        delivery = row.get("delivery_id")
        row["delivery_id"] = self._deliveries.get(delivery) if isinstance(delivery, int) else None
        self._insert_new("handoffs", row, f"handoff {row['id']!r}", same_ok=True)

    def _insert_new(self, table: str, row: Row, what: str, *, same_ok: bool = False) -> None:
        here = self.conn.execute(f"SELECT * FROM {table} WHERE id = ?", (row["id"],)).fetchone()
        if here is None:
            self._insert(table, row)
            return
        if same_ok and all(here[key] == value for key, value in row.items()):
            return
        raise BundleConflict(
            f"{what} of the bundle is here already, as part of something else; nothing was "
            "imported",
            id=row["id"],
        )

    def _known_thread(self, thread_id: object) -> str | None:
        if not isinstance(thread_id, str):
            return None
        if thread_id == self.thread_id:
            return thread_id
        found = self.conn.execute("SELECT 1 FROM threads WHERE id = ?", (thread_id,)).fetchone()
        return thread_id if found is not None else None

    def _insert(self, table: str, row: Row, *, returning_id: bool = False) -> int:
        """Insert `row`; with `returning_id`, the id this database gave it (`RETURNING`, which
        both backends speak: PostgreSQL has no `lastrowid`)."""
        columns = ", ".join(row)
        marks = ", ".join("?" * len(row))
        returning = " RETURNING id" if returning_id else ""
        cursor = self.conn.execute(
            f"INSERT INTO {table} ({columns}) VALUES ({marks}){returning}", tuple(row.values())
        )
        if not returning_id:
            return 0
        given = cursor.fetchone()
        return int(given[0]) if given is not None else 0

    def _check_columns(self, table: str, row: Row) -> None:
        known = self._columns.get(table)
        if known is None:
            known = table_columns(self.conn, table)
            self._columns[table] = known
        unknown = sorted(set(row) - known)
        if unknown:
            raise BundleInvalid(
                f"the bundle's {table} records have columns this alp does not know "
                f"({', '.join(unknown[:5])}): it was made by a newer alp; upgrade this one",
                table=table,
            )


def table_columns(conn: BlockingTx, table: str) -> frozenset[str]:
    """The columns `table` has in this database (SQLite's PRAGMA, PostgreSQL's catalogue)."""
    if dialect_of(conn) == "postgres":
        rows = conn.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = ?",
            (table,),
        )
        return frozenset(str(r[0]) for r in rows)
    return frozenset(str(r[1]) for r in conn.execute(f"PRAGMA table_info({table})"))
