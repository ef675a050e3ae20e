"""History entries: the writer's SQL functions, and inserting and indexing entries.

The schema is migration V3 (`alpd.store.migrations`); the why is in docs/history.md. Two FTS5
indexes cover the same documents (`search_docs`: history entries and thread titles/context):

* ``search_words`` — unicode61 with ``remove_diacritics 2`` over text folded first
  (`alpd.store.entry_rows.fold_text`): SQLite 3.40's tokenizer strips combining marks but
  leaves letters that have no decomposition (Vietnamese ``đ``, Polish ``ł``, Nordic ``ø``
  …), so those are mapped in Python. Folding maps one character to one character, so token
  positions in the folded text are those of the stored text and ``snippet()`` highlights
  the original.
* ``search_cjk`` — trigram, only for documents containing characters of scripts written
  without spaces (CJK, kana, Hangul, Thai, Lao, Khmer, Myanmar): routing, not a second copy
  of everything, because trigram costs ~4.4x the text on disk and builds ~3.3x slower
  (measured on a corpus of transcripts when this was chosen; see docs/history.md).

What is computed per entry is computed where the entry is parsed, off the single writer
(`alpd.store.entry_rows.EntryRow`: the entry's digest, its folded body when folding changes
it, whether it is CJK-like); the writer runs set-based statements and calls Python only for
a copy's digest and for the few folded bodies (`insert_entries`). The thread documents'
triggers call ``alp_fold`` and ``alp_has_cjk``, registered on the writer by
`register_functions`.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from typing import Final

from alpd.store.db import BlockingTx, Tx, on_thread
from alpd.store.entry_rows import (
    DIGESTED_COLUMNS,
    ROW_COLUMNS,
    EntryRow,
    Value,
    entry_content,
    entry_digest,
    entry_row,
    fold_text,
    has_cjk,
)

__all__ = [
    "DIGESTED_COLUMNS",
    "INSERT_ENTRY",
    "INSERT_WHOLE",
    "EntryRow",
    "Value",
    "entry_content",
    "entry_digest",
    "entry_row",
    "fold_text",
    "has_cjk",
    "insert_entries",
    "register_functions",
    "register_functions_on",
]


def _has_cjk_sql(text: str | None) -> int:
    return 1 if has_cjk(text) else 0


async def register_functions(tx: Tx) -> None:
    """Give the writer (``tx``'s connection) the functions the V3 index triggers and
    `INSERT_ENTRY` call."""
    await on_thread(tx, register_functions_on)


def register_functions_on(conn: BlockingTx) -> None:
    """`register_functions` on the writer's thread."""
    conn.create_function("alp_fold", 1, fold_text, deterministic=True)
    conn.create_function("alp_has_cjk", 1, _has_cjk_sql, deterministic=True)
    conn.create_function(
        "alp_entry_digest", len(DIGESTED_COLUMNS), _entry_digest_sql, deterministic=True
    )


def _entry_digest_sql(*values: Value) -> str:
    return entry_digest(entry_content(values))


# One statement inserts an entry, or nothing if (native_id, execution_id) exists. An entry
# whose native id another execution already holds (a fork's or resume's copy) is stored as
# a pointer to that row, without its text, and is not indexed. Its digest covers what is
# stored (`v`): the parse side's `:digest` for an entry stored whole, `alp_entry_digest` on
# the writer for a copy (only then is `copy_of` known).
def _insert_entry(bind: Callable[[str], str]) -> str:
    p = {column: bind(column) for column in ROW_COLUMNS}
    return f"""
INSERT INTO history_entries ({", ".join(DIGESTED_COLUMNS)}, digest)
SELECT v.*, iif(v.copy_of IS NULL, {p["digest"]},
    alp_entry_digest({", ".join("v." + column for column in DIGESTED_COLUMNS)}))
FROM (
    SELECT {p["execution_id"]} AS execution_id, {p["native_id"]} AS native_id,
        {p["role"]} AS role, {p["kind"]} AS kind, iif(c.id IS NULL, {p["text"]}, NULL) AS text,
        {p["tool_name"]} AS tool_name, iif(c.id IS NULL, {p["tool_input"]}, NULL) AS tool_input,
        iif(c.id IS NULL, {p["output_tail"]}, NULL) AS output_tail,
        {p["output_sha256"]} AS output_sha256, {p["ts"]} AS ts, {p["model"]} AS model,
        iif(c.id IS NULL, {p["usage"]}, NULL) AS usage, {p["call_id"]} AS call_id,
        {p["is_error"]} AS is_error, {p["byte_offset"]} AS byte_offset, c.id AS copy_of
    FROM (SELECT (SELECT id FROM history_entries
                  WHERE native_id = {p["native_id"]} AND execution_id != {p["execution_id"]}
                    AND copy_of IS NULL LIMIT 1) AS id) AS c
) AS v
WHERE true
ON CONFLICT (native_id, execution_id) DO NOTHING
"""


INSERT_ENTRY: Final = _insert_entry(lambda column: ":" + column)
# The same, bound by position (`EntryRow.values`, in `ROW_COLUMNS` order): what the writer
# runs, without a dict and a look-up by name per value.
_INSERT_ENTRY_AT: Final = _insert_entry(lambda column: f"?{ROW_COLUMNS.index(column) + 1}")

# An entry whose native id no other execution holds (in the store, or earlier in the same
# batch) cannot be a copy: this plain statement stores what `INSERT_ENTRY` would for it,
# without the copy look-up and the iif()s (a third of the insert's CPU on an import).
INSERT_WHOLE: Final = f"""
INSERT INTO history_entries ({", ".join(ROW_COLUMNS)})
VALUES ({", ".join("?" * len(ROW_COLUMNS))})
ON CONFLICT (native_id, execution_id) DO NOTHING
"""

# Which of the native ids in ?1 (a JSON array) some stored entry holds.
_HELD: Final = (
    "SELECT DISTINCT native_id FROM history_entries "
    "WHERE native_id IN (SELECT value FROM json_each(?1))"
)

_ENTRY_BODY: Final = (
    "coalesce(text, '') || char(10) || coalesce(tool_name, '') || char(10) "
    "|| coalesce(tool_input, '') || char(10) || coalesce(output_tail, '')"
)

# The ids a batch inserted (above the max before it; copies are never indexed) of the rows
# listed in ?2 as [execution_id, native_id] (the ones folded or CJK-like).
_IDS_OF: Final = (
    "SELECT h.id, j.key FROM json_each(?2) j JOIN history_entries h "
    "ON h.native_id = json_extract(j.value, '$[1]') "
    "AND h.execution_id = json_extract(j.value, '$[0]') "
    "WHERE h.id > ?1 AND h.copy_of IS NULL"
)
# Every entry a batch inserted, but those of ?2 (folded: inserted by `_INDEX_FOLDED`), each
# a single statement over the batch so FTS5 keeps its terms pending until COMMIT.
_INDEX_WORDS: Final = (
    f"INSERT INTO search_words (rowid, body) SELECT id, {_ENTRY_BODY} FROM history_entries "
    "WHERE id > ?1 AND copy_of IS NULL "
    "AND id NOT IN (SELECT CAST(value AS INTEGER) FROM json_each(?2))"
)
_INDEX_FOLDED: Final = "INSERT INTO search_words (rowid, body) VALUES (?, ?)"
_INDEX_CJK: Final = (
    "INSERT INTO cjk_docs (id) SELECT CAST(value AS INTEGER) FROM json_each(?1)",
    f"INSERT INTO search_cjk (rowid, body) SELECT id, {_ENTRY_BODY} "
    "FROM cjk_docs c JOIN history_entries h USING (id) WHERE c.id > ?1",
)


def insert_entries(conn: BlockingTx, rows: Sequence[EntryRow]) -> tuple[int, int]:
    """Insert `rows` and index the ones inserted, in the caller's transaction (blocking: on
    the writer's thread, `Store.write_blocking`). Returns the largest entry id before them
    (the entries added are those above it) and how many were added."""
    before = int(conn.execute("SELECT coalesce(max(id), 0) FROM history_entries").fetchone()[0])
    if not rows:
        return before, 0
    added = 0
    maybe_copies = _maybe_copies(conn, rows)
    # in order, so entry ids follow the transcript as before
    for may_copy, run in itertools.groupby(rows, key=lambda row: row.key[1] in maybe_copies):
        statement = _INSERT_ENTRY_AT if may_copy else INSERT_WHOLE
        added += max(conn.executemany(statement, [row.values for row in run]).rowcount, 0)
    marked: dict[tuple[str, str], EntryRow] = {}
    for row in rows:
        if row.folded is not None or row.cjk:
            # the first of a repeated native id is the one stored
            marked.setdefault(row.key, row)
    folded: list[tuple[int, str]] = []
    cjk: list[int] = []
    if marked:
        keys = list(marked)
        for entry_id, key in conn.execute(
            _IDS_OF, (before, json.dumps(keys, ensure_ascii=False))
        ).fetchall():
            row = marked[keys[key]]
            if row.folded is not None:
                folded.append((entry_id, row.folded))
            if row.cjk:
                cjk.append(entry_id)
    conn.execute(_INDEX_WORDS, (before, json.dumps([entry_id for entry_id, _ in folded])))
    if folded:
        conn.executemany(_INDEX_FOLDED, folded)
    if cjk:
        conn.execute(_INDEX_CJK[0], (json.dumps(cjk),))
        conn.execute(_INDEX_CJK[1], (before,))
    return before, added


def _maybe_copies(conn: BlockingTx, rows: Sequence[EntryRow]) -> set[str]:
    """The native ids among `rows` that may be stored as a copy: held by a stored entry, or
    by two executions within `rows`. Every other row goes in through `INSERT_WHOLE`."""
    first_holder: dict[str, str] = {}
    maybe: set[str] = set()
    for row in rows:
        execution_id, native_id = row.key
        if first_holder.setdefault(native_id, execution_id) != execution_id:
            maybe.add(native_id)
    held = conn.execute(_HELD, (json.dumps(list(first_holder), ensure_ascii=False),))
    maybe.update(native_id for (native_id,) in held.fetchall())
    return maybe
