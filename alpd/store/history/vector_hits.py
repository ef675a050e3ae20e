"""The meaning leg's statements (docs/search.md): the candidates of a search's product
that pass keyword search's filters (ids only), and the hits a page shows of them, made like
keyword search's (labels, the digest check of their entries) with the chunk's text as the
snippet. Each takes the reader's blocking connection, inside the search's one hop.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Final, NamedTuple

from alpd.store.db import BlockingTx
from alpd.store.history.search import (
    HIT_COLUMNS,
    HIT_JOINS,
    Params,
    check_entry_digests,
    hit_from_row,
)
from alpd.store.history.transcript import tuples
from alpd.store.history.vectors import unit_texts
from protocol import messages as m

__all__ = ["Candidate", "chunk_hits", "filtered_chunk_ids", "meaning_candidates"]


class Candidate(NamedTuple):
    """A chunk the meaning leg found that passes the search's filters, with what fusion needs
    of its unit: its entries (to know a keyword hit inside it) and whether a sub-agent's
    execution wrote it. A tuple: a search makes up to 80 of these, and a frozen dataclass's
    `__init__` cost ~7 times as much."""

    chunk_id: int
    unit_id: int
    execution_id: str
    role: str
    first_entry: int
    last_entry: int
    sub_agent: bool


def meaning_candidates(
    conn: BlockingTx, uid: int, params: m.HistorySearchParams, chunk_ids: Sequence[int]
) -> list[Candidate]:
    """The candidates (best first) that pass the search's filters: ids only, one statement
    (the hits a page shows are made by `chunk_hits`). The filters are keyword search's
    (`filters_sql`) read through the unit: its execution (owner, thread, runtime) and its
    role; the chunk's entry is joined only for `since`/`until` (its time), because a row of
    `history_entries` is wide and the candidates are scattered across the table (half the
    statement's time on a 300 MB history)."""
    if not chunk_ids:
        return []
    p = Params()
    entry, where = _filters(uid, params, p)
    ids = p("chunk_ids", json.dumps(list(chunk_ids)))
    sql = f"""
    SELECT c.id, c.unit_id, u.execution_id, u.role, u.first_entry, u.last_entry,
        e.kind = 'sub-agent'
    FROM search_chunks c JOIN search_units u ON u.id = c.unit_id
    JOIN executions e ON e.id = u.execution_id LEFT JOIN threads t ON t.id = e.thread_id
    {entry}
    WHERE c.id IN (SELECT CAST(value AS INTEGER) FROM json_each({ids})) AND {where}
    """
    rank = {chunk_id: i for i, chunk_id in enumerate(chunk_ids)}
    rows = tuples(conn, sql, p.values)  # plain tuples: a Row per candidate cost 0.1-0.2 ms
    rows.sort(key=lambda row: rank[row[0]])
    return [
        Candidate(chunk_id, unit_id, execution_id, role, first, last, bool(sub_agent))
        for chunk_id, unit_id, execution_id, role, first, last, sub_agent in rows
    ]


def _filters(uid: int, params: m.HistorySearchParams, p: Params) -> tuple[str, str]:
    """The join a `since`/`until` needs (the chunk's entry, for its time) and the WHERE
    clauses of keyword search's filters, read through the unit and its execution."""
    clauses = [f"coalesce(e.owner_uid, t.owner_uid) = {p('uid', uid)}"]
    if params.thread_id is not None:
        clauses.append(f"e.thread_id = {p('thread', params.thread_id)}")
    if params.runtime is not None:
        clauses.append(f"e.runtime = {p('runtime', params.runtime)}")
    if params.role is not None:
        clauses.append(f"u.role = {p('role', params.role)}")
    entry = ""
    if params.since is not None or params.until is not None:
        entry = "LEFT JOIN history_entries h ON h.id = c.entry_id"
        at = "coalesce(h.ts, e.created_at, t.updated_at)"
        if params.since is not None:
            clauses.append(f"{at} >= {p('since', params.since)}")
        if params.until is not None:
            clauses.append(f"{at} <= {p('until', params.until)}")
    return entry, " AND ".join(clauses)


def filtered_chunk_ids(conn: BlockingTx, uid: int, params: m.HistorySearchParams) -> list[int]:
    """Every chunk that passes the search's filters, by id: the meaning leg ranks only these
    when the best of all chunks held too few of them (a narrow `--thread`, a `--since` past
    most of history, another user's history). As many as the index holds at most, like the
    matrix itself; one statement."""
    p = Params()
    entry, where = _filters(uid, params, p)
    sql = f"""
    SELECT c.id FROM search_chunks c JOIN search_units u ON u.id = c.unit_id
    JOIN executions e ON e.id = u.execution_id LEFT JOIN threads t ON t.id = e.thread_id
    {entry}
    WHERE {where}
    """
    return [chunk_id for (chunk_id,) in conn.execute(sql, p.values)]


def chunk_hits(
    conn: BlockingTx, params: m.HistorySearchParams, chunk_ids: Sequence[int]
) -> dict[int, m.SearchHit]:
    """The hit each chunk shows (chunk id → hit), its entry re-hashed like keyword search's;
    the snippet is the chunk's text. For the page's hits only: their units' texts are
    rebuilt (`unit_texts`, one statement for all)."""
    if not chunk_ids:
        return {}
    p = Params()
    ids = p("chunk_ids", json.dumps(list(chunk_ids)))
    sql = f"""
    SELECT c.id AS chunk_id, c.unit_id, c.start, c.length, c.entry_id AS doc, 0.0 AS score,
        {HIT_COLUMNS}
    FROM search_chunks c {HIT_JOINS.format(doc="c.entry_id")}
    WHERE c.id IN (SELECT CAST(value AS INTEGER) FROM json_each({ids}))
    """
    rows = conn.execute(sql, p.values).fetchall()
    check_entry_digests(rows)
    if not rows:
        return {}
    at = {name: i for i, name in enumerate(rows[0].keys())}
    texts = unit_texts(conn, list({row[at["unit_id"]] for row in rows}))
    found: dict[int, m.SearchHit] = {}
    for row in rows:
        unit_id = row[at["unit_id"]]
        start, length = row[at["start"]], row[at["length"]]
        snippet = _snippet(texts[unit_id][start : start + length])
        found[row[at["chunk_id"]]] = hit_from_row(row, at, snippet)
    return found


SNIPPET_CHARS: Final = 200


def _snippet(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SNIPPET_CHARS else text[:SNIPPET_CHARS].rsplit(" ", 1)[0] + "…"
