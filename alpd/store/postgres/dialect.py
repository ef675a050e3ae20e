"""The store's SQL, written for SQLite, as PostgreSQL runs it.

Every statement of the store modules is SQLite's; rather than a second copy of each, a
statement is rewritten once (cached) on its way to PostgreSQL, in this order:

1. `%` doubles (psycopg's placeholders use it), outside nothing: the store never writes a
   `?` or a `%` inside a string literal that is not meant as text, so a literal `%` stays text.
2. `?NNN` placeholders (SQLite's numbered ones, one value used twice) become `%(pNNN)s`, and
   the statement is marked *numbered*: its parameters are passed as a mapping; plain `?`
   become `%s`.
3. `INSERT OR IGNORE` becomes `INSERT … ON CONFLICT DO NOTHING`; `INSERT OR REPLACE INTO t`
   becomes `INSERT … ON CONFLICT (t's key) DO UPDATE SET` every inserted column (`REPLACE_KEYS`
   names each table's key: a REPLACE on a table not there is refused, not guessed);
   `UPDATE OR IGNORE` becomes `UPDATE` (its statement says in SQL which rows it skips).
   On a table whose key ends with the person a row is bound to (`PERSON_KEYED`, migration
   34), a conflict target `ON CONFLICT (…)` names `owner_role` last, as its key does.
4. SQLite's functions that PostgreSQL lacks or spells otherwise: `char(n)` → `chr(n)`,
   `instr` → `strpos`, the two-argument scalar `max`/`min` → `GREATEST`/`LEAST`,
   `CAST(policy AS TEXT)` (a BLOB of JSON) → `convert_from(policy, 'UTF8')`,
   `a IS NOT b` / `a IS b` (SQLite's null-safe compare) → `IS [NOT] DISTINCT FROM`,
   `iif`, `json_extract`, `json_each` → `alp_iif`, `alp_json_extract`, `alp_json_each` (SQL
   functions the PostgreSQL schema defines, `alpd.store.postgres.schema`), `LIKE` → `ILIKE`
   (SQLite's LIKE ignores ASCII case), the one-argument `group_concat(x)` →
   `string_agg(x, ',')`, SQLite's `LIMIT -1` (no limit, before an OFFSET) → `LIMIT ALL`.

What does not translate (FTS5's MATCH, `rowid`) has its own variant in the store module that
needs it, chosen by `is_postgres(tx)`.
"""

from __future__ import annotations

import functools
import re
from typing import Final, NamedTuple

from alpd.store.postgres.persons import OWNER_COLUMN

__all__ = ["PERSON_KEYED", "REPLACE_KEYS", "Translated", "ddl", "translate"]

#: the conflict target of each table an `INSERT OR REPLACE` writes
REPLACE_KEYS: Final = {
    "history_cursors": ("execution_id",),
    "recaps": ("thread_id",),
    "channel_cursors": ("channel", "account"),
}

#: tables whose key, on PostgreSQL, ends with the row's person (`owner_role`): what two
#: persons on one database may each have under the same channel key (migration 34)
PERSON_KEYED: Final = frozenset(
    {"channel_cursors", "channel_senders", "channel_chats", "channel_seen"}
)


class Translated(NamedTuple):
    sql: str
    #: the statement uses SQLite's numbered placeholders: pass its parameters as a mapping
    numbered: bool


_NUMBERED = re.compile(r"\?(\d+)")
_PLAIN = re.compile(r"\?(?!\d)")
_OR_IGNORE = re.compile(r"\bINSERT\s+OR\s+IGNORE\s+INTO\b", re.IGNORECASE)
_UPDATE_OR_IGNORE = re.compile(r"\bUPDATE\s+OR\s+IGNORE\b", re.IGNORECASE)
_OR_REPLACE = re.compile(r"\bINSERT\s+OR\s+REPLACE\s+INTO\s+(\w+)\s*\(([^)]*)\)", re.IGNORECASE)
_RETURNING = re.compile(r"\bRETURNING\b", re.IGNORECASE)
_INSERT_INTO = re.compile(r"\bINSERT\s+INTO\s+(\w+)", re.IGNORECASE)
_CONFLICT_TARGET = re.compile(r"\bON\s+CONFLICT\s*\(([^()]*)\)", re.IGNORECASE)
_PAIR = r"\(\s*([^(),]+?)\s*,\s*([^(),]+?)\s*\)"
_SCALAR_MAX = re.compile(r"\bmax" + _PAIR, re.IGNORECASE)
_SCALAR_MIN = re.compile(r"\bmin" + _PAIR, re.IGNORECASE)
_IS_NOT = re.compile(r"\bIS\s+NOT\s+(?!NULL\b|DISTINCT\b|TRUE\b|FALSE\b)", re.IGNORECASE)
_IS = re.compile(r"\bIS\s+(?!NOT\b|NULL\b|DISTINCT\b|TRUE\b|FALSE\b)", re.IGNORECASE)
#: a BLOB of JSON read as text (an execution's policy): bytes decoded, not PostgreSQL's hex
_BLOB_AS_TEXT = re.compile(r"\bCAST\(\s*((?:\w+\.)?policy)\s+AS\s+TEXT\s*\)", re.IGNORECASE)
_RENAMED: Final = (
    (re.compile(r"\bchar\s*\(", re.IGNORECASE), "chr("),
    (re.compile(r"\binstr\s*\(", re.IGNORECASE), "strpos("),
    (re.compile(r"\biif\s*\(", re.IGNORECASE), "alp_iif("),
    (re.compile(r"\bjson_extract\s*\(", re.IGNORECASE), "alp_json_extract("),
    (re.compile(r"\bjson_each\s*\(", re.IGNORECASE), "alp_json_each("),
    (re.compile(r"(?<!I)\bLIKE\b"), "ILIKE"),
    (re.compile(r"\bLIMIT\s+-1\b", re.IGNORECASE), "LIMIT ALL"),
    (re.compile(r"\bgroup_concat\s*\(\s*([^(),]+?)\s*\)", re.IGNORECASE), r"string_agg(\1, ',')"),
)


@functools.lru_cache(maxsize=1024)
def translate(sql: str) -> Translated:
    """`sql` (SQLite's) as PostgreSQL runs it; see the module docstring for each step."""
    out = sql.replace("%", "%%")
    numbered = bool(_NUMBERED.search(out))
    if numbered:
        out = _NUMBERED.sub(lambda m: f"%(p{m.group(1)})s", out)
    out = _PLAIN.sub("%s", out)
    if _OR_IGNORE.search(out):
        out = _append_conflict(_OR_IGNORE.sub("INSERT INTO", out), "ON CONFLICT DO NOTHING")
    out = _UPDATE_OR_IGNORE.sub("UPDATE", out)
    match = _OR_REPLACE.search(out)
    if match:
        out = _or_replace(out, match)
    out = _person_keyed(out)
    out = _SCALAR_MAX.sub(r"GREATEST(\1, \2)", out)
    out = _SCALAR_MIN.sub(r"LEAST(\1, \2)", out)
    out = _BLOB_AS_TEXT.sub(r"convert_from(\1, 'UTF8')", out)
    out = _IS_NOT.sub("IS DISTINCT FROM ", out)
    out = _IS.sub("IS NOT DISTINCT FROM ", out)
    for pattern, name in _RENAMED:
        out = pattern.sub(name, out)
    return Translated(out, numbered)


def _or_replace(sql: str, match: re.Match[str]) -> str:
    table = match.group(1)
    key = REPLACE_KEYS.get(table)
    if key is None:
        raise ValueError(f"INSERT OR REPLACE INTO {table}: its key is not in REPLACE_KEYS")
    columns = [c.strip() for c in match.group(2).split(",") if c.strip()]
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in key)
    head = f"INSERT INTO {table} ({', '.join(columns)})"
    out = sql[: match.start()] + head + sql[match.end() :]
    action = f"DO UPDATE SET {updates}" if updates else "DO NOTHING"
    return _append_conflict(out, f"ON CONFLICT ({', '.join(key)}) {action}")


def _person_keyed(sql: str) -> str:
    insert = _INSERT_INTO.search(sql)
    if insert is None or insert.group(1) not in PERSON_KEYED:
        return sql
    return _CONFLICT_TARGET.sub(
        lambda m: f"ON CONFLICT ({m.group(1).strip()}, {OWNER_COLUMN})", sql
    )


def _append_conflict(sql: str, clause: str) -> str:
    returning = _RETURNING.search(sql)
    if returning:
        return f"{sql[: returning.start()]}{clause} {sql[returning.start() :]}"
    return f"{sql.rstrip().rstrip(';')} {clause}"


_SQLITE_ONLY_DDL = re.compile(
    r"\b(CREATE\s+TRIGGER|VIRTUAL\s+TABLE|PRAGMA|sqlite_schema|sqlite_master)\b", re.IGNORECASE
)
_TABLE_OPTIONS = re.compile(r"\)\s*STRICT\s*(,\s*WITHOUT\s+ROWID)?\s*$|\)\s*WITHOUT\s+ROWID\s*$")
_TYPES: Final = (
    (r"\bINTEGER\b", "BIGINT"),
    (r"\bREAL\b", "DOUBLE PRECISION"),
    (r"\bBLOB\b", "BYTEA"),
)


def ddl(statement: str) -> str:
    """A migration's statement (SQLite's DDL) as PostgreSQL's, where that is mechanical:
    STRICT and WITHOUT ROWID dropped, INTEGER as BIGINT, REAL as DOUBLE PRECISION, BLOB as
    BYTEA. A trigger, a virtual table, a PRAGMA or an edit of sqlite_schema is refused: its
    migration needs its PostgreSQL statements written (`POSTGRES_MIGRATIONS`). An `INTEGER
    PRIMARY KEY` (SQLite's rowid, an identity on PostgreSQL) is refused too."""
    if _SQLITE_ONLY_DDL.search(statement) or re.search(
        r"\bINTEGER\s+PRIMARY\s+KEY\b", statement, re.IGNORECASE
    ):
        raise ValueError(
            "not mechanical for PostgreSQL: write this migration's statements in "
            f"alpd.store.migrations.POSTGRES_MIGRATIONS ({statement.strip()[:60]}…)"
        )
    out = _TABLE_OPTIONS.sub(")", statement.strip())
    for pattern, name in _TYPES:
        out = re.sub(pattern, name, out, flags=re.IGNORECASE)
    return out
