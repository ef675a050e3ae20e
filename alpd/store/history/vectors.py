"""The meaning index's statements (migration V19; docs/search.md): units and chunks cut
from history entries, the vectors of each fingerprinted generation, where the builder stands,
and the units' texts (the meaning leg's own statements: `vector_hits`).

Every function takes a blocking connection: the builder's steps run whole on the writer's
thread (`Store.write_blocking`) or the reader's (`Store.read`), one hop each. Vectors are
stored as little-endian float16, L2-normalised, `dims` of them per row.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from alpd.domain.history.units import (
    MAX_UNIT_CHARS,
    RUN_SEPARATOR,
    Chunk,
    EntryText,
    OpenRun,
    UnitText,
    unit_entry_texts,
)
from alpd.store.db import BlockingTx

__all__ = [
    "ChunkToEmbed",
    "Generation",
    "IndexCounts",
    "VectorRow",
    "drop_generation",
    "ensure_generation",
    "generations",
    "index_counts",
    "index_marks",
    "mark_ready",
    "pending_chunks",
    "read_entries_to_cut",
    "units_touched",
    "vectors_of",
    "write_units",
    "write_vectors",
]

#: rows a vector load reads per statement (bounded memory for the rows in flight)
LOAD_BATCH: Final = 4096


@dataclass(frozen=True, slots=True)
class Generation:
    id: int
    fingerprint: str
    embedder: str
    model: str
    dims: int
    embedded_through: int
    created_at: str
    ready_at: str | None


@dataclass(frozen=True, slots=True)
class ChunkToEmbed:
    id: int
    digest: bytes
    text: str


@dataclass(frozen=True, slots=True)
class IndexCounts:
    #: history entries not yet cut into units
    entries_pending: int
    chunks: int
    #: chunks at or below the generation's `embedded_through`
    embedded: int
    last_chunk: int
    #: where the counts were taken: the cutter's cursor, the last history entry, the last
    #: chunk and the generation's `embedded_through` (`index_counts`)
    marks: tuple[int, int, int, int] = (0, 0, 0, 0)


_GENERATION_COLUMNS: Final = (
    "id, fingerprint, embedder, model, dims, embedded_through, created_at, ready_at"
)


def generations(conn: BlockingTx) -> list[Generation]:
    """Every generation, oldest first."""
    rows = conn.execute(f"SELECT {_GENERATION_COLUMNS} FROM search_generations ORDER BY id")
    return [Generation(*row) for row in rows.fetchall()]


def ensure_generation(
    conn: BlockingTx, fingerprint: str, embedder: str, model: str, dims: int, now: str
) -> Generation:
    """The generation of `fingerprint`, made (empty, not ready) when it is new."""
    conn.execute(
        "INSERT OR IGNORE INTO search_generations (fingerprint, embedder, model, dims, created_at)"
        " VALUES (?, ?, ?, ?, ?)",
        (fingerprint, embedder, model, dims, now),
    )
    row = conn.execute(
        f"SELECT {_GENERATION_COLUMNS} FROM search_generations WHERE fingerprint = ?",
        (fingerprint,),
    ).fetchone()
    return Generation(*row)


def mark_ready(conn: BlockingTx, generation: int, now: str) -> None:
    conn.execute(
        "UPDATE search_generations SET ready_at = ? WHERE id = ? AND ready_at IS NULL",
        (now, generation),
    )


def drop_generation(conn: BlockingTx, generation: int, limit: int) -> bool:
    """Delete up to `limit` of a generation's vectors; the generation itself once it has
    none left (True then)."""
    deleted = conn.execute(
        "DELETE FROM search_vectors WHERE generation = ?1 AND digest IN "
        "(SELECT digest FROM search_vectors WHERE generation = ?1 LIMIT ?2)",
        (generation, limit),
    ).rowcount
    if deleted < limit:
        conn.execute("DELETE FROM search_generations WHERE id = ?", (generation,))
        return True
    return False


def index_counts(
    conn: BlockingTx, generation: int, known: IndexCounts | None = None
) -> IndexCounts:
    """The generation's counts; `known` as it is when nothing moved since it was taken.

    Chunks are only written or deleted with the cutter's cursor moved (`write_units`), and a
    generation's embedded count only changes with its `embedded_through`: with the four
    marks equal (each one indexed look-up), the counts are too. Counting reads every row —
    on PostgreSQL under row-level security every row's heap tuple — so an idle index, asked
    every few seconds, must not count."""
    cursor, last_entry, last_chunk, through = conn.execute(
        "SELECT (SELECT entry_id FROM search_index_cursor), "
        "(SELECT coalesce(max(id), 0) FROM history_entries), "
        "(SELECT coalesce(max(id), 0) FROM search_chunks), "
        "(SELECT coalesce(max(embedded_through), 0) FROM search_generations WHERE id = ?)",
        (generation,),
    ).fetchone()
    marks = (int(cursor), int(last_entry), int(last_chunk), int(through))
    if known is not None and known.marks == marks:
        return known
    pending = (
        conn.execute("SELECT count(*) FROM history_entries WHERE id > ?", (cursor,)).fetchone()[0]
        if last_entry > cursor
        else 0
    )
    chunks = conn.execute("SELECT count(*) FROM search_chunks").fetchone()[0]
    embedded = (
        conn.execute("SELECT count(*) FROM search_chunks WHERE id <= ?", (through,)).fetchone()[0]
        if through
        else 0
    )
    return IndexCounts(pending, chunks, embedded, int(last_chunk), marks)


# -- cutting entries into units ------------------------------------------------------------


def _run_texts(conn: BlockingTx, execution_id: str, first: int, last: int) -> list[Any]:
    return conn.execute(
        "SELECT id, text FROM history_entries WHERE execution_id = ? AND id BETWEEN ? AND ? "
        "AND role = 'assistant' AND kind = 'reply' AND copy_of IS NULL ORDER BY id",
        (execution_id, first, last),
    ).fetchall()


def read_entries_to_cut(conn: BlockingTx, limit: int) -> tuple[list[EntryText], dict[str, OpenRun]]:
    """The next `limit` entries after the cutter's cursor, and the open run (if any) of each
    execution they belong to."""
    after = conn.execute("SELECT entry_id FROM search_index_cursor").fetchone()[0]
    rows = conn.execute(
        "SELECT id, execution_id, role, kind, CASE WHEN copy_of IS NULL THEN text END "
        "FROM history_entries WHERE id > ? ORDER BY id LIMIT ?",
        (after, limit),
    ).fetchall()
    entries = [EntryText(*row) for row in rows]
    runs: dict[str, OpenRun] = {}
    for execution in dict.fromkeys(entry.execution_id for entry in entries):
        last = conn.execute(
            "SELECT id, role, first_entry, last_entry, chars FROM search_units "
            "WHERE execution_id = ? ORDER BY first_entry DESC LIMIT 1",
            (execution,),
        ).fetchone()
        if last is None or last[1] != "assistant" or last[4] >= MAX_UNIT_CHARS:
            continue
        texts = unit_entry_texts(_run_texts(conn, execution, last[2], last[3]))
        runs[execution] = OpenRun(last[0], execution, last[2], last[3], texts)
    return entries, runs


def write_units(
    conn: BlockingTx, units: Sequence[tuple[UnitText, list[Chunk]]], through_entry: int
) -> int:
    """Store new and grown units with their chunks (a chunk whose digest did not change keeps
    its row, so it is not embedded again), drop the vectors no chunk points to any more, and
    move the cutter's cursor: one transaction with the caller's. Returns the chunks added."""
    added = 0
    for unit, chunks in units:
        if unit.unit_id is None:
            # RETURNING, not lastrowid: PostgreSQL has none
            given = conn.execute(
                "INSERT INTO search_units (execution_id, role, first_entry, last_entry, chars)"
                " VALUES (?, ?, ?, ?, ?) RETURNING id",
                (unit.execution_id, unit.role, unit.first_entry, unit.last_entry, len(unit.text)),
            ).fetchone()
            unit_id = given[0]
            existing: dict[int, tuple[int, bytes]] = {}
        else:
            unit_id = unit.unit_id
            conn.execute(
                "UPDATE search_units SET last_entry = ?, chars = ? WHERE id = ?",
                (unit.last_entry, len(unit.text), unit_id),
            )
            existing = {
                seq: (chunk_id, digest)
                for chunk_id, seq, digest in conn.execute(
                    "SELECT id, seq, digest FROM search_chunks WHERE unit_id = ?", (unit_id,)
                )
            }
        removed: list[bytes] = []
        for chunk in chunks:
            old = existing.pop(chunk.seq, None)
            if old is not None and old[1] == chunk.digest:
                continue
            if old is not None:
                # Moved aside and deleted once the new row is in: SQLite gives a new row the
                # largest id + 1, so deleting first would hand a run's last chunk's id to its
                # replacement — at or below `embedded_through`, never embedded.
                conn.execute("UPDATE search_chunks SET seq = -1 - seq WHERE id = ?", (old[0],))
            conn.execute(
                "INSERT INTO search_chunks (unit_id, seq, entry_id, start, length, digest) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (unit_id, chunk.seq, chunk.entry_id, chunk.start, chunk.length, chunk.digest),
            )
            added += 1
            if old is not None:
                conn.execute("DELETE FROM search_chunks WHERE id = ?", (old[0],))
                removed.append(old[1])
        for chunk_id, digest in existing.values():
            conn.execute("DELETE FROM search_chunks WHERE id = ?", (chunk_id,))
            removed.append(digest)
        for digest in removed:
            conn.execute(
                "DELETE FROM search_vectors WHERE digest = ?1 AND NOT EXISTS "
                "(SELECT 1 FROM search_chunks WHERE digest = ?1)",
                (digest,),
            )
    conn.execute("UPDATE search_index_cursor SET entry_id = ?", (through_entry,))
    return added


# -- embedding -------------------------------------------------------------------------------


def unit_text(conn: BlockingTx, unit_id: int) -> str:
    """A unit's text, rebuilt from its entries exactly as the cutter joined them."""
    execution, role, first, last = conn.execute(
        "SELECT execution_id, role, first_entry, last_entry FROM search_units WHERE id = ?",
        (unit_id,),
    ).fetchone()
    if role == "user":
        row = conn.execute("SELECT text FROM history_entries WHERE id = ?", (first,)).fetchone()
        return str(row[0] or "")
    return RUN_SEPARATOR.join(
        text for _, text in unit_entry_texts(_run_texts(conn, execution, first, last))
    )


def unit_texts(conn: BlockingTx, unit_ids: Sequence[int]) -> dict[int, str]:
    """`unit_text` of each unit, in one statement (a page's units)."""
    rows = conn.execute(
        "SELECT u.id, u.role, x.text FROM search_units u JOIN history_entries x "
        "ON x.id BETWEEN u.first_entry AND u.last_entry AND x.execution_id = u.execution_id "
        "WHERE u.id IN (SELECT CAST(value AS INTEGER) FROM json_each(?)) AND ((u.role = 'user' "
        "AND x.id = u.first_entry) OR (u.role = 'assistant' AND x.role = 'assistant' "
        "AND x.kind = 'reply' AND x.copy_of IS NULL)) ORDER BY u.id, x.id",
        (json.dumps(list(unit_ids)),),
    ).fetchall()
    runs: dict[int, list[tuple[int, str | None]]] = {unit_id: [] for unit_id in unit_ids}
    roles: dict[int, str] = {}
    for unit_id, role, text in rows:
        runs[unit_id].append((unit_id, text))
        roles[unit_id] = role
    return {
        unit_id: str(entries[0][1] or "") if entries and roles[unit_id] == "user"
        else RUN_SEPARATOR.join(text for _, text in unit_entry_texts(entries))
        for unit_id, entries in runs.items()
    }  # fmt: skip


def pending_chunks(
    conn: BlockingTx, generation: int, limit: int
) -> tuple[list[ChunkToEmbed], list[int], int]:
    """The next `limit` chunks after the generation's `embedded_through`: those whose digest
    has no vector in it yet (with their texts) and those that already have one (their ids),
    and the last chunk id looked at (0: none left)."""
    through = conn.execute(
        "SELECT embedded_through FROM search_generations WHERE id = ?", (generation,)
    ).fetchone()[0]
    rows = conn.execute(
        "SELECT c.id, c.unit_id, c.start, c.length, c.digest, "
        "EXISTS (SELECT 1 FROM search_vectors v WHERE v.generation = ? AND v.digest = c.digest) "
        "FROM search_chunks c WHERE c.id > ? ORDER BY c.id LIMIT ?",
        (generation, through, limit),
    ).fetchall()
    texts: dict[int, str] = {}
    todo: list[ChunkToEmbed] = []
    done: list[int] = []
    seen: set[bytes] = set()
    for chunk_id, unit_id, start, length, digest, embedded in rows:
        if embedded or digest in seen:
            done.append(chunk_id)
            continue
        seen.add(digest)
        if unit_id not in texts:
            texts[unit_id] = unit_text(conn, unit_id)
        todo.append(ChunkToEmbed(chunk_id, digest, texts[unit_id][start : start + length]))
    return todo, done, rows[-1][0] if rows else 0


def write_vectors(
    conn: BlockingTx, generation: int, vectors: Iterable[tuple[bytes, bytes]], through: int
) -> None:
    """Store a batch's vectors (digest, float16 bytes) and move the generation's cursor to
    the last chunk the batch covered: one transaction, so a kill -9 loses no vector it
    claims and embeds nothing twice."""
    conn.executemany(
        "INSERT OR IGNORE INTO search_vectors (generation, digest, vector) VALUES (?, ?, ?)",
        ((generation, digest, vector) for digest, vector in vectors),
    )
    conn.execute(
        "UPDATE search_generations SET embedded_through = max(embedded_through, ?) WHERE id = ?",
        (through, generation),
    )


def index_marks(conn: BlockingTx, generation: int) -> tuple[int, int]:
    """The generation's `embedded_through` (0 when it is gone) and the cutter's cursor (the
    last history entry cut into units), in one statement: the meaning leg reads both at the
    start of every search, to extend its matrix and to refresh what it knows of the rows it
    holds (`units_touched`)."""
    through, cursor = conn.execute(
        "SELECT (SELECT embedded_through FROM search_generations WHERE id = ?), "
        "(SELECT entry_id FROM search_index_cursor)",
        (generation,),
    ).fetchone()
    return int(through or 0), int(cursor)


class VectorRow(NamedTuple):
    """A chunk's vector and what the meaning leg's filters read of it (its unit, the unit's
    execution): all of it fixed once written but the unit's `last_entry`, which grows with a
    run (`units_touched`)."""

    chunk_id: int
    vector: bytes
    unit_id: int
    execution_id: str
    role: str
    first_entry: int
    last_entry: int
    owner_uid: int
    thread_id: str | None
    runtime: str
    sub_agent: bool


def vectors_of(
    conn: BlockingTx, generation: int, after_chunk: int, through: int, limit: int = LOAD_BATCH
) -> list[VectorRow]:
    """The chunks in (`after_chunk`, `through`] that have a vector in `generation`, by chunk
    id, each with its unit and execution: the meaning leg loads its matrix with these."""
    rows = conn.execute(
        "SELECT c.id, v.vector, c.unit_id, u.execution_id, u.role, u.first_entry, "
        "u.last_entry, e.owner_uid, e.thread_id, e.runtime, e.kind = 'sub-agent' "
        "FROM search_chunks c JOIN search_vectors v "
        "ON v.generation = ? AND v.digest = c.digest JOIN search_units u ON u.id = c.unit_id "
        "JOIN executions e ON e.id = u.execution_id WHERE c.id > ? AND c.id <= ? "
        "ORDER BY c.id LIMIT ?",
        (generation, after_chunk, through, limit),
    )
    return [
        VectorRow(chunk, vector, unit, execution, role, first, last, owner, thread, kind, bool(sub))
        for chunk, vector, unit, execution, role, first, last, owner, thread, kind, sub in rows
    ]


def units_touched(
    conn: BlockingTx, after_entry: int, through_entry: int
) -> list[tuple[int, int, int | None]]:
    """(unit id, its `last_entry`, one of its chunk ids or None) for every unit of every
    execution that has an entry in (`after_entry`, `through_entry`]: the only units the
    cutter may have grown, and whose chunks it may have replaced, while its cursor moved
    over that span (`write_units`; no other statement changes a unit or deletes a chunk)."""
    return [
        (int(unit_id), int(last_entry), None if chunk_id is None else int(chunk_id))
        for unit_id, last_entry, chunk_id in conn.execute(
            "SELECT u.id, u.last_entry, c.id FROM search_units u "
            "LEFT JOIN search_chunks c ON c.unit_id = u.id WHERE u.execution_id IN "
            "(SELECT DISTINCT execution_id FROM history_entries WHERE id > ? AND id <= ?)",
            (after_entry, through_entry),
        )
    ]
