"""The keyword leg of a hybrid search (docs/search.md), in two statements like the meaning
leg's (`vector_hits`): the ranked page as ids with what fusion needs of each (`keyword_refs`:
bm25 order, keyword search's filters, no snippet, no labels, no digest), and then the hits of
those the fused page shows (`keyword_page`: snippets, labels and the digest check for those
alone). A hybrid search fetches 4 × the limit from each leg and shows the limit: building
all 80 keyword hits cost 10 ms of a 1 GB history's search where their ids cost 1.2 ms.

A CJK query of a short term (LIKE, newest first, rare) makes its hits whole in the first
statement (its snippet is made in Python from the row's text); `keyword_page` returns those.
So does every query on PostgreSQL (its search is `search_postgres`'s, not FTS5's).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from alpd.store.db import BlockingTx, dialect_of
from alpd.store.history.search import (
    HIT_COLUMNS,
    HIT_JOINS,
    SNIPPET_TOKENS,
    Params,
    SearchQuery,
    check_entry_digests,
    filters_sql,
    hit_from_row,
    keyword_hits,
)
from protocol import messages as m

__all__ = ["KeywordRef", "keyword_page", "keyword_refs"]


@dataclass(frozen=True, slots=True)
class KeywordRef:
    """A keyword hit's document (entries positive, thread documents negative) with what
    fusion needs: its execution and role (to find the meaning unit it lies in) and whether a
    sub-agent's execution wrote it. `hit` is the whole hit when the leg already made it (LIKE)."""

    doc: int
    execution_id: str | None
    role: str | None
    sub_agent: bool
    hit: m.SearchHit | None = None


def _table(query: SearchQuery) -> str:
    return "search_words" if query.index == "words" else "search_cjk"


def keyword_refs(
    uid: int, params: m.HistorySearchParams, query: SearchQuery, conn: BlockingTx
) -> list[KeywordRef]:
    """The keyword leg's page, best first, as ids (the thread filter already checked)."""
    if query.index == "none":
        return []
    if query.index == "like" or dialect_of(conn) == "postgres":
        # PostgreSQL has no FTS5 to split ids from hits: its page is made whole, as
        # keyword search makes it (search_postgres), and `keyword_page` returns those
        return [
            KeywordRef(
                found.doc, found.hit.execution_id, found.hit.role, found.sub_agent, found.hit
            )
            for found in keyword_hits(uid, params, query, conn)
        ]
    p = Params()
    filters = filters_sql(uid, params, p)
    table = _table(query)
    sql = f"""
    SELECT f.rowid, h.execution_id, h.role, e.kind = 'sub-agent'
    FROM {table} f {HIT_JOINS.format(doc="f.rowid")}
    WHERE {table} MATCH {p("expression", query.expression)} AND {filters}
    ORDER BY f.rank LIMIT {p("limit", params.limit)}
    """
    return [
        KeywordRef(doc, execution_id, role, bool(sub_agent))
        for doc, execution_id, role, sub_agent in conn.execute(sql, p.values)
    ]


def keyword_page(
    params: m.HistorySearchParams, query: SearchQuery, refs: Sequence[KeywordRef], conn: BlockingTx
) -> dict[int, m.SearchHit]:
    """The hit of each of `refs` (document → hit), made as keyword search makes its own:
    the snippet with the query's matches marked, the labels, and the entry re-hashed
    (HISTORY_ENTRY_TAMPERED). One statement for all."""
    found = {ref.doc: ref.hit for ref in refs if ref.hit is not None}
    docs = [ref.doc for ref in refs if ref.hit is None]
    if not docs:
        return found
    p = Params()
    table = _table(query)
    match = p("expression", query.expression)
    hs, he = p("hs", params.highlight_start), p("he", params.highlight_end)
    sql = f"""
    WITH page AS (SELECT value AS doc, 0.0 AS score FROM json_each({p("docs", json.dumps(docs))}))
    SELECT page.doc, page.score,
        snippet({table}, 0, {hs}, {he}, '…', {SNIPPET_TOKENS}) AS snippet, {HIT_COLUMNS}
    FROM page JOIN {table} ON {table}.rowid = page.doc AND {table} MATCH {match}
    {HIT_JOINS.format(doc="page.doc")}
    """
    rows = conn.execute(sql, p.values).fetchall()
    check_entry_digests(rows)
    if rows:
        at = {name: i for i, name in enumerate(rows[0].keys())}
        for row in rows:
            found[row[at["doc"]]] = hit_from_row(row, at, row[at["snippet"]] or "")
    return found
