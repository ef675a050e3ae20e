"""History tables: text folding for the index, the writer's SQL functions, and the queries.

The schema is migration V3 (`alpd.store.migrations`); the why is in docs/history.md. Two FTS5
indexes cover the same documents (`search_docs`: history entries and thread titles/context):

* ``search_words`` — unicode61 with ``remove_diacritics 2`` over text folded here first
  (`fold_text`): SQLite 3.40's tokenizer strips combining marks but leaves letters that have
  no decomposition (Vietnamese ``đ``, Polish ``ł``, Nordic ``ø`` …), so those are mapped in
  Python. Folding maps one character to one character, so token positions in the folded text
  are those of the stored text and ``snippet()`` highlights the original.
* ``search_cjk`` — trigram, only for documents containing characters of scripts written
  without spaces (CJK, kana, Hangul, Thai, Lao, Khmer, Myanmar): routing, not a second copy
  of everything, because trigram costs ~4.4x the text on disk and builds ~3.3x slower
  (measured on a corpus of transcripts when this was chosen; see docs/history.md).

The statements that feed both (`INDEX_ENTRIES`, and the thread documents' triggers) call
``alp_fold`` and ``alp_has_cjk``, registered on the writer by `register_functions`.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Final

import aiosqlite

__all__ = [
    "CURSOR_COLUMNS",
    "DIGESTED_COLUMNS",
    "INDEX_ENTRIES",
    "INSERT_ENTRY",
    "UPSERT_CURSOR",
    "Cursor",
    "entry_content",
    "entry_digest",
    "fold_text",
    "has_cjk",
    "register_functions",
]

# Letters with no Unicode decomposition, which `remove_diacritics` therefore keeps.
_FOLD: Final = str.maketrans(
    {
        "đ": "d",
        "Đ": "D",
        "ł": "l",
        "Ł": "L",
        "ø": "o",
        "Ø": "O",
        "ħ": "h",
        "Ħ": "H",
        "ŧ": "t",
        "Ŧ": "T",
        "ı": "i",
        "ƀ": "b",
        "ɨ": "i",
        "ʉ": "u",
        "ð": "d",
        "Ð": "D",
    }
)

_CJK: Final = re.compile(
    "[\u0e00-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u3040-\u30ff\u3130-\u318f"
    "\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002ffff]"
)


_FOLDABLE: Final = re.compile("[" + "".join(chr(code) for code in _FOLD) + "]")


def fold_text(text: str | None) -> str:
    """``text`` with the undecomposable diacritic letters mapped to their base letter."""
    if not text or text.isascii():
        return text or ""
    # str.translate costs ~38 ns a character once a text holds any non-ASCII character (an
    # output tail's leading "…" is enough); the regex scan that rules it out runs in C.
    if _FOLDABLE.search(text) is None:
        return text
    return text.translate(_FOLD)


def has_cjk(text: str | None) -> bool:
    """Whether ``text`` holds a character of a script written without spaces between words."""
    if not text or text.isascii():
        return False
    return _CJK.search(text) is not None


def _has_cjk_sql(text: str | None) -> int:
    return 1 if has_cjk(text) else 0


async def register_functions(conn: aiosqlite.Connection) -> None:
    """Give ``conn`` the functions the V3 index triggers and `INSERT_ENTRY` call."""
    await conn.create_function("alp_fold", 1, fold_text, deterministic=True)
    await conn.create_function("alp_has_cjk", 1, _has_cjk_sql, deterministic=True)
    await conn.create_function("alp_entry_digest", 1, entry_digest, deterministic=True)


#: the stored columns of an entry its digest covers, in this order
DIGESTED_COLUMNS: Final = (
    "execution_id", "native_id", "role", "kind", "text", "tool_name", "tool_input",
    "output_tail", "output_sha256", "ts", "model", "usage", "call_id", "is_error",
    "byte_offset", "copy_of",
)  # fmt: skip


def entry_content(prefix: str = "") -> str:
    """The SQL of an entry's digested content: a JSON array of `DIGESTED_COLUMNS` built by
    SQLite's own `json_array`, so the writer and any reader produce the same text."""
    return "json_array(" + ", ".join(prefix + column for column in DIGESTED_COLUMNS) + ")"


def entry_digest(content: str) -> str:
    """`sha256:<hex>` of an entry's content (`entry_content`)."""
    return "sha256:" + hashlib.sha256(content.encode("utf-8")).hexdigest()


# One statement inserts an entry, or nothing if (native_id, execution_id) exists. An entry
# whose native id another execution already holds (a fork's or resume's copy) is stored as
# a pointer to that row, without its text, and is not indexed. Its digest covers what is
# stored (`v`), computed by `alp_entry_digest` on the writer.
INSERT_ENTRY: Final = f"""
INSERT INTO history_entries ({", ".join(DIGESTED_COLUMNS)}, digest)
SELECT v.*, alp_entry_digest({entry_content("v.")}) FROM (
    SELECT :execution_id AS execution_id, :native_id AS native_id, :role AS role,
        :kind AS kind, iif(c.id IS NULL, :text, NULL) AS text, :tool_name AS tool_name,
        iif(c.id IS NULL, :tool_input, NULL) AS tool_input,
        iif(c.id IS NULL, :output_tail, NULL) AS output_tail, :output_sha256 AS output_sha256,
        :ts AS ts, :model AS model, iif(c.id IS NULL, :usage, NULL) AS usage,
        :call_id AS call_id, :is_error AS is_error, :byte_offset AS byte_offset,
        c.id AS copy_of
    FROM (SELECT (SELECT id FROM history_entries
                  WHERE native_id = :native_id AND execution_id != :execution_id
                    AND copy_of IS NULL LIMIT 1) AS id) AS c
) AS v
WHERE true
ON CONFLICT (native_id, execution_id) DO NOTHING
"""

_ENTRY_BODY: Final = (
    "coalesce(text, '') || char(10) || coalesce(tool_name, '') || char(10) "
    "|| coalesce(tool_input, '') || char(10) || coalesce(output_tail, '')"
)

# Index the entries a batch inserted (ids above the max before it; copies are not indexed),
# each a single statement over the batch so FTS5 keeps its terms pending until COMMIT.
INDEX_ENTRIES: Final = (
    f"INSERT INTO search_words (rowid, body) SELECT id, alp_fold({_ENTRY_BODY}) "
    "FROM history_entries WHERE id > ?1 AND copy_of IS NULL",
    f"INSERT INTO cjk_docs (id) SELECT id FROM history_entries "
    f"WHERE id > ?1 AND copy_of IS NULL AND alp_has_cjk({_ENTRY_BODY})",
    f"INSERT INTO search_cjk (rowid, body) SELECT id, {_ENTRY_BODY} "
    "FROM cjk_docs c JOIN history_entries h USING (id) WHERE c.id > ?1",
)

CURSOR_COLUMNS: Final = (
    "execution_id, path, format, consumed, session_id, model, skipped, redactions, usage, "
    "cost_usd, links_to, link_kind, updated_at"
)


@dataclass(slots=True)
class Cursor:
    """Where the copy of one execution's transcript stands (a `history_cursors` row)."""

    execution_id: str
    path: str
    format: str
    consumed: int = 0
    session_id: str | None = None
    model: str | None = None
    skipped: int = 0
    redactions: int = 0
    usage: str | None = None
    cost_usd: float | None = None
    links_to: str | None = None
    link_kind: str | None = None
    updated_at: str = ""

    def values(self) -> tuple[object, ...]:
        return (
            self.execution_id,
            self.path,
            self.format,
            self.consumed,
            self.session_id,
            self.model,
            self.skipped,
            self.redactions,
            self.usage,
            self.cost_usd,
            self.links_to,
            self.link_kind,
            self.updated_at,
        )


UPSERT_CURSOR: Final = (
    f"INSERT OR REPLACE INTO history_cursors ({CURSOR_COLUMNS}) "
    f"VALUES ({', '.join(['?'] * len(CURSOR_COLUMNS.split(',')))})"
)
