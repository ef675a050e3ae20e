"""`history/search`'s statements: the ranked (bm25) or LIKE query over both full-text
indexes (`alpd.store.history.entries` says why two), the digest check of the entries a page
shows, and the page's hits built from its rows.

`alpd.services.history.search.parse_query` turns a user's text into a `SearchQuery` (the
index to ask and a safe FTS5 expression); `search_on` runs the whole search in one hop to the
reader's thread. Results are ranked and limited in one query, then snippets are made for the
page only (`snippet()` costs a re-tokenisation per row; for a common word that is thousands
of rows). Each hit carries the labels clear and undo gave its root's entries (`before-clear`,
`undone`: `alpd.store.threads.steps.labels_sql`).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from alpd.errors import HistoryEntryTampered, PermissionDenied, ThreadNotFound
from alpd.store.db import BlockingTx, dialect_of
from alpd.store.entry_rows import DIGESTED_COLUMNS, entry_content, entry_digest
from alpd.store.threads.steps import labels_from, labels_sql
from protocol import messages as m

__all__ = [
    "HIT_COLUMNS",
    "HIT_JOINS",
    "STORED_COLUMNS_SQL",
    "Index",
    "KeywordHit",
    "Params",
    "SearchQuery",
    "check_entry_digest",
    "check_entry_digests",
    "check_thread_filter",
    "filters_sql",
    "hit_from_row",
    "keyword_hits",
    "like_pattern",
    "like_snippet",
    "postgres_search_sql",
    "postgres_snippet",
    "ranked_sql",
    "search_on",
    "search_sql",
]

SNIPPET_TOKENS: Final = 16
LIKE_CONTEXT_CHARS: Final = 60

_STORED: Final = tuple(f"stored_{column}" for column in DIGESTED_COLUMNS)
#: an entry `h`'s digested columns, side by side and in order, for `check_entry_digests`
STORED_COLUMNS_SQL: Final = ", ".join(
    f"h.{column} AS {name}" for column, name in zip(DIGESTED_COLUMNS, _STORED, strict=True)
)

Index = Literal["words", "trigram", "like", "none"]


@dataclass(frozen=True, slots=True)
class KeywordHit:
    """A keyword hit with what a hybrid search's fusion needs: its document id (entries
    positive, thread documents negative) and whether a sub-agent's execution wrote it."""

    doc: int
    hit: m.SearchHit
    sub_agent: bool


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """What a user's text becomes: the index to ask and the expression to ask it."""

    index: Index
    expression: str = ""
    #: the terms, for LIKE and for highlighting LIKE results
    terms: tuple[str, ...] = ()


class Params:
    """Numbered SQL parameters (`?N`, reusable in one statement); `Store.fetchall` binds a
    sequence."""

    def __init__(self) -> None:
        self.values: list[Any] = []
        self._names: dict[str, str] = {}

    def __call__(self, name: str, value: Any = None) -> str:
        if name not in self._names:
            self.values.append(value)
            self._names[name] = f"?{len(self.values)}"
        return self._names[name]


def filters_sql(uid: int, params: m.HistorySearchParams, p: Params) -> str:
    clauses = [f"coalesce(e.owner_uid, t.owner_uid) = {p('uid', uid)}"]
    if params.thread_id is not None:
        clauses.append(f"coalesce(e.thread_id, d.thread_id) = {p('thread', params.thread_id)}")
    if params.runtime is not None:
        clauses.append(f"e.runtime = {p('runtime', params.runtime)}")
    if params.role is not None:
        clauses.append(f"h.role = {p('role', params.role)}")
    if params.since is not None:
        clauses.append(f"coalesce(h.ts, e.created_at, t.updated_at) >= {p('since', params.since)}")
    if params.until is not None:
        clauses.append(f"coalesce(h.ts, e.created_at, t.updated_at) <= {p('until', params.until)}")
    return " AND ".join(clauses)


# Joins from a document id (`doc`) to what a hit shows; entries have positive ids, thread
# documents negative ones.
HIT_JOINS: Final = """
    LEFT JOIN history_entries h ON h.id = {doc} AND {doc} > 0
    LEFT JOIN executions e ON e.id = h.execution_id
    LEFT JOIN thread_docs d ON d.id = {doc} AND {doc} < 0
    LEFT JOIN threads t ON t.id = coalesce(e.thread_id, d.thread_id)
"""

HIT_COLUMNS: Final = f"""
    h.execution_id, h.role, h.kind, coalesce(h.ts, e.created_at, t.updated_at) AS at,
    e.sequence, e.runtime, e.thread_id AS entry_thread, e.native_session_id,
    e.kind AS execution_kind,
    coalesce(e.thread_id, d.thread_id) AS thread_id, t.title,
    h.id AS entry_id, h.digest, (SELECT since FROM history_digests) AS digests_since,
    {STORED_COLUMNS_SQL},
    {labels_sql("e.root_id")}
"""

_ENTRY_BODY: Final = (
    "coalesce(h.text, '') || char(10) || coalesce(h.tool_name, '') || char(10) "
    "|| coalesce(h.tool_input, '') || char(10) || coalesce(h.output_tail, '')"
)
_THREAD_BODY: Final = "coalesce(d.title, '') || char(10) || coalesce(d.context, '')"


def ranked_sql(
    table: str, filters: str, p: Params, expression: str, limit: int, start: str, end: str
) -> str:
    """The bm25-ranked page of hits with snippets (public for the bench's direct runs)."""
    match, hs, he = p("expression", expression), p("hs", start), p("he", end)
    return f"""
    WITH page AS (
        SELECT f.rowid AS doc, f.rank AS score
        FROM {table} f {HIT_JOINS.format(doc="f.rowid")}
        WHERE {table} MATCH {match} AND {filters}
        ORDER BY f.rank LIMIT {p("limit", limit)}
    )
    SELECT page.doc, page.score,
        snippet({table}, 0, {hs}, {he}, '…', {SNIPPET_TOKENS}) AS snippet, {HIT_COLUMNS}
    FROM page JOIN {table} ON {table}.rowid = page.doc AND {table} MATCH {match}
    {HIT_JOINS.format(doc="page.doc")}
    ORDER BY page.score
    """


def _like_sql(terms: tuple[str, ...], filters: str, p: Params, limit: int) -> str:
    body = f"CASE WHEN c.id > 0 THEN {_ENTRY_BODY} ELSE {_THREAD_BODY} END"
    likes = " AND ".join(
        f"{body} LIKE {p(f'like{i}', like_pattern(term))} ESCAPE '\\'"
        for i, term in enumerate(terms)
    )
    return f"""
    SELECT c.id AS doc, 0.0 AS score, {body} AS body, {HIT_COLUMNS}
    FROM cjk_docs c {HIT_JOINS.format(doc="c.id")}
    WHERE {likes} AND {filters}
    ORDER BY coalesce(h.ts, t.updated_at) DESC, c.id DESC LIMIT {p("limit", limit)}
    """


def like_pattern(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def like_snippet(body: str, terms: tuple[str, ...], start: str, end: str) -> str:
    """A snippet around the first term found in `body`, every term occurrence marked."""
    lowered = body.lower()
    first = min(
        (found for found in (lowered.find(t.lower()) for t in terms) if found >= 0), default=0
    )
    left = max(0, first - LIKE_CONTEXT_CHARS)
    right = min(len(body), first + LIKE_CONTEXT_CHARS * 2)
    window = body[left:right]
    pattern = re.compile(
        "|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True)), re.IGNORECASE
    )
    marked = pattern.sub(lambda match: f"{start}{match.group(0)}{end}", window)
    return ("…" if left else "") + marked + ("…" if right < len(body) else "")


def hit_from_row(row: sqlite3.Row, at: dict[str, int], snippet: str) -> m.SearchHit:
    """A hit from a row of the search query; `at` holds its columns' positions (a name look-up
    in a `sqlite3.Row` is a case-insensitive scan of all ~40 columns)."""
    is_entry = row[at["doc"]] > 0
    return m.SearchHit(
        source="entry" if is_entry else "thread",
        snippet=snippet,
        score=float(row[at["score"]]),
        thread_id=row[at["thread_id"]],
        thread_title=row[at["title"]],
        execution_id=row[at["execution_id"]],
        sequence=row[at["sequence"]],
        runtime=row[at["runtime"]],
        role=row[at["role"]],
        kind=row[at["kind"]],
        at=row[at["at"]],
        native_session_id=row[at["native_session_id"]],
        entry_id=row[at["entry_id"]] if is_entry else None,
        legacy=is_entry and row[at["entry_thread"]] is None,
        labels=labels_from(row[at["before_clear"]], row[at["undone"]]),
    )


def check_entry_digests(rows: Sequence[sqlite3.Row]) -> None:
    """Every entry a hit shows is re-hashed before it is shown: HISTORY_ENTRY_TAMPERED when
    its stored content no longer matches its digest, or when an entry written since entries
    have digests (`history_digests.since`) has none. The rows hold `entry_id`, `execution_id`,
    `digest`, `digests_since` and `STORED_COLUMNS_SQL`; the columns are found by position once
    for all rows, and the stored ones read as one slice."""
    if not rows:
        return
    names = rows[0].keys()
    first = names.index(_STORED[0])
    stored = slice(first, first + len(_STORED))
    if tuple(names[stored]) != _STORED:
        raise ValueError("select the digested columns with STORED_COLUMNS_SQL, side by side")
    entry_at, execution_at, digest_at, since_at = (
        names.index(name) for name in ("entry_id", "execution_id", "digest", "digests_since")
    )
    for row in rows:
        entry_id = row[entry_at]
        if entry_id is not None:
            check_entry_digest(
                entry_id, row[execution_at], row[digest_at], row[since_at], row[stored]
            )


def check_entry_digest(
    entry_id: int, execution_id: str, digest: str | None, since: int | None,
    stored: Sequence[object],
) -> None:  # fmt: skip
    """One entry's check (`check_entry_digests`'s, for rows read by position): `stored` is
    its `DIGESTED_COLUMNS` values in order, `since` the `history_digests.since` it was read
    with."""
    if digest is None and entry_id < (since or 0):
        return  # copied before entries had digests: nothing to check it against
    if digest != entry_digest(entry_content(stored)):  # type: ignore[arg-type]
        raise HistoryEntryTampered(
            f"history entry {entry_id} of execution {execution_id} no longer matches "
            "its digest: the state database was edited outside alpd, so search will not "
            "show what it holds",
            entryId=entry_id,
            executionId=execution_id,
        )


def postgres_search_sql(
    params: m.HistorySearchParams, query: SearchQuery, filters: str, p: Params
) -> str:
    # imported here: the PostgreSQL statements build on this module's joins and columns
    from alpd.store.history.search_postgres import search_sql_postgres

    return search_sql_postgres(params, query, filters, p)


def postgres_snippet(body: str, expression: str, start: str, end: str) -> str:
    from alpd.store.history.search_postgres import words_snippet

    return words_snippet(body, expression, start, end)


def search_sql(
    uid: int, params: m.HistorySearchParams, query: SearchQuery, dialect: str = "sqlite"
) -> tuple[str, list[Any]]:
    """The statement and its parameters for a parsed query (`words`, `trigram` or `like`)
    over the documents of `uid`, in the store's `dialect` (public for the bench's direct
    runs)."""
    p = Params()
    filters = filters_sql(uid, params, p)
    if query.index == "like":
        return _like_sql(query.terms, filters, p, params.limit), p.values
    if dialect == "postgres":
        return postgres_search_sql(params, query, filters, p), p.values
    table = "search_words" if query.index == "words" else "search_cjk"
    sql = ranked_sql(
        table,
        filters,
        p,
        query.expression,
        params.limit,
        params.highlight_start,
        params.highlight_end,
    )
    return sql, p.values


def search_on(
    uid: int, params: m.HistorySearchParams, query: SearchQuery, conn: BlockingTx
) -> m.HistorySearchResult:
    """The whole search on the reader connection (`Store.read`), in one hop to its thread:
    the thread filter's checks (THREAD_NOT_FOUND, PERMISSION_DENIED for `uid`), the ranked
    page, the digest check of its entries and the hits."""
    check_thread_filter(uid, params, conn)
    hits = [found.hit for found in keyword_hits(uid, params, query, conn)]
    return m.HistorySearchResult(hits=hits, index=query.index, expression=query.expression)


def check_thread_filter(uid: int, params: m.HistorySearchParams, conn: BlockingTx) -> None:
    """A filter on a thread that does not exist is THREAD_NOT_FOUND, not "no matches"; on
    another user's, PERMISSION_DENIED."""
    if params.thread_id is None:
        return
    thread = conn.execute(
        "SELECT owner_uid FROM threads WHERE id = ?", (params.thread_id,)
    ).fetchone()
    if thread is None:
        raise ThreadNotFound(
            f"no thread {params.thread_id!r}; `alp thread list --all` shows yours",
            threadId=params.thread_id,
        )
    if thread["owner_uid"] != uid:
        raise PermissionDenied(
            f"thread {params.thread_id} belongs to another user", threadId=params.thread_id
        )


def keyword_hits(
    uid: int, params: m.HistorySearchParams, query: SearchQuery, conn: BlockingTx
) -> list[KeywordHit]:
    """The keyword leg's page, best first (the thread filter already checked)."""
    if query.index == "none":
        return []
    sql, values = search_sql(uid, params, query, dialect_of(conn))
    rows = conn.execute(sql, values).fetchall()
    check_entry_digests(rows)
    if not rows:
        return []
    at = {name: i for i, name in enumerate(rows[0].keys())}
    start, end = params.highlight_start, params.highlight_end
    found = []
    for row in rows:
        if "body" in at:
            snippet = like_snippet(row[at["body"]], query.terms, start, end)
        elif "words_body" in at:
            snippet = postgres_snippet(row[at["words_body"]] or "", query.expression, start, end)
        else:
            snippet = row[at["snippet"]] or ""
        sub_agent = row[at["execution_kind"]] == "sub-agent"
        found.append(KeywordHit(row[at["doc"]], hit_from_row(row, at, snippet), sub_agent))
    return found
