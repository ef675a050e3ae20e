"""`history/search`: search over history entries, thread titles and context lines, by
keyword, by meaning, or both (`mode`, docs/search.md).

Modes: `keyword` is the full-text search below. `meaning` asks the meaning index
(`alpd.services.history.meaning`) alone; SEARCH_INDEX_NOT_READY while no generation of it
can answer. `hybrid` (the default) fuses both legs by reciprocal rank (k = 60,
`alpd.domain.history.fusion`), each leg fetching 4 × the limit with the same filters and
labels; a keyword hit inside a unit the meaning leg found is the same hit (it rises). While no
meaning index can answer, `hybrid` answers by keyword and says so (`notice`, `mode`
"keyword"), never silently.

User text never reaches FTS5's query syntax: `parse_query` splits it into terms (quoted
phrases kept together, a trailing `*` kept as a prefix search) and writes each as an FTS5
string literal, so `AND`, `NEAR(`, `col:`, `"`, `^`, `-` … are only ever searched for, never
interpreted, and no input can make a syntax error. Routing (why: `alpd.store.history.entries`):

* no CJK-like character → the unicode61 index (`search_words`), terms folded like the
  stored text (Vietnamese `đường` finds `duong`, `Đường` and `đương`), bm25 order;
* a CJK-like character and every term ≥ 3 characters → the trigram index (`search_cjk`,
  substring match), bm25 order;
* a CJK-like term under 3 characters (a trigram index cannot match it) → LIKE over the
  documents of the trigram index only, newest first.

Results are ranked and limited in one query, then snippets are made for the page only. The
whole search (thread check, query, digest check, hits: `alpd.store.history.search.search_on`)
is one unit of work on the reader connection's thread (`Store.read`): one hop per search, and
no SQL on the event loop.
History is a record to search, never a source of context (docs/contract.md, invariant 7).
Each hit carries the labels clear and undo gave its root's entries (`before-clear`,
`undone`: `alpd.services.history.labels`); labelled entries are found like any other.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import Final

import msgspec

from alpd.domain.history.fusion import fuse
from alpd.errors import InvalidArgument, SearchIndexNotReady
from alpd.services.context import Caller
from alpd.services.history.meaning import MeaningIndex
from alpd.services.history.meaning_leg import (
    FirstPass,
    LegPlan,
    LegResult,
    Scored,
    extended_on,
    first_pass,
    meaning_leg,
    meaning_leg_from,
)
from alpd.store.db import BlockingTx, Store
from alpd.store.entry_rows import fold_text, has_cjk
from alpd.store.history.keyword_leg import KeywordRef, keyword_page, keyword_refs
from alpd.store.history.search import SearchQuery, check_thread_filter, search_on
from alpd.store.history.vector_hits import chunk_hits
from protocol import messages as m

__all__ = ["MAX_LIMIT", "MAX_TERMS", "parse_query", "search"]

MAX_LIMIT: Final = 200
MAX_TERMS: Final = 32
MAX_QUERY_CHARS: Final = 1000
#: each leg of a hybrid search fetches this many times the limit before fusing
LEG_FACTOR: Final = 4

_TERM: Final = re.compile(r'"([^"]*)"?|(\S+)')
_WORD_CHAR: Final = re.compile(r"\w")


def _literal(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def parse_query(text: str) -> SearchQuery:
    """The safe FTS5 form of a user's query (pure; see the module docstring)."""
    terms: list[tuple[str, bool]] = []
    # SQLite reads an FTS5 expression as a C string: a NUL would end it mid-literal.
    for match in _TERM.finditer(text[:MAX_QUERY_CHARS].replace("\x00", " ")):
        phrase, word = match.group(1), match.group(2)
        term, prefix = (phrase, False) if phrase is not None else (word, False)
        if phrase is None and len(term) > 1 and term.endswith("*"):
            term, prefix = term.rstrip("*"), True
        term = term.strip()
        if term:
            terms.append((term, prefix))
        if len(terms) == MAX_TERMS:
            break
    if any(has_cjk(term) for term, _ in terms):
        plain = tuple(term for term, _ in terms)
        if all(len(term) >= 3 for term in plain):
            return SearchQuery("trigram", " ".join(_literal(term) for term in plain), plain)
        return SearchQuery("like", "", plain)
    # unicode61 drops everything but letters and digits; a term with neither is no term.
    kept = [(fold_text(term), prefix) for term, prefix in terms if _WORD_CHAR.search(term)]
    if not kept:
        return SearchQuery("none")
    expression = " ".join(_literal(term) + ("*" if prefix else "") for term, prefix in kept)
    return SearchQuery("words", expression, tuple(term for term, _ in kept))


async def search(
    store: Store, meaning: MeaningIndex, caller: Caller, params: m.HistorySearchParams
) -> m.HistorySearchResult:
    """Hits for `params.query` across the caller's threads and legacy imports, best first."""
    if not 1 <= params.limit <= MAX_LIMIT:
        raise InvalidArgument(f"limit must be 1..{MAX_LIMIT}", limit=params.limit)
    query = parse_query(params.query)
    state = meaning.state()
    if params.mode == "keyword":
        result = await store.read(partial(search_on, caller.uid, params, query))
        return msgspec.structs.replace(result, mode="keyword", meaning=state)
    if not meaning.can_answer():
        notice = _not_ready(state)
        if params.mode == "meaning":
            raise SearchIndexNotReady(
                f"{notice}; search by keyword (--mode keyword) meanwhile", state=state.state
            )
        result = await store.read(partial(search_on, caller.uid, params, query))
        return msgspec.structs.replace(result, mode="keyword", meaning=state, notice=notice)
    plan = await meaning.plan(params.query)
    if plan is None:
        notice = "the meaning index's model cannot be loaded to embed the query"
        if params.mode == "meaning":
            raise SearchIndexNotReady(notice, state=state.state)
        result = await store.read(partial(search_on, caller.uid, params, query))
        return msgspec.structs.replace(result, mode="keyword", meaning=state, notice=notice)
    if params.mode == "hybrid":
        hits, leg = await _hybrid(store, caller.uid, params, query, plan)
    else:
        hits, leg = await store.read(partial(_meaning_on, caller.uid, params, query, plan))
    meaning.adopt(leg)
    return m.HistorySearchResult(
        hits=hits,
        index="meaning" if params.mode == "meaning" else query.index,
        expression="" if params.mode == "meaning" else query.expression,
        mode=params.mode,
        meaning=state,
    )


def _not_ready(state: m.MeaningIndexState) -> str:
    if state.state == "off":
        return f"the meaning index is off ({state.reason}): keyword hits only"
    return (
        f"the meaning index is building ({state.embedded} of {state.total} chunks): "
        "keyword hits only"
    )


_Key = tuple[str, int]


def _meaning_on(
    uid: int,
    params: m.HistorySearchParams,
    query: SearchQuery,
    plan: LegPlan,
    conn: BlockingTx,
) -> tuple[list[m.SearchHit], LegResult]:
    """A `meaning` search whole, in one hop to the reader's thread: the thread filter's
    checks, the meaning leg (`meaning_leg`: the product, the filter of its candidates), and
    the shown chunks' labels, digest check and snippets."""
    check_thread_filter(uid, params, conn)
    leg = meaning_leg(plan, uid, params, params.limit, conn)
    shown = chunk_hits(conn, params, [s.candidate.chunk_id for s in leg.found])
    hits = [
        msgspec.structs.replace(
            shown[s.candidate.chunk_id], score=round(s.cosine, 6), legs=["meaning"]
        )
        for s in leg.found
        if s.candidate.chunk_id in shown
    ]
    return hits, leg


async def _hybrid(
    store: Store, uid: int, params: m.HistorySearchParams, query: SearchQuery, plan: LegPlan
) -> tuple[list[m.SearchHit], LegResult]:
    """A hybrid search in one hop whose first statements overlap the product: the reader's
    thread runs the thread filter's checks and the keyword leg (ids) while the loop's
    computes the codes' product and its best chunks (`first_pass`; the kernel holds the GIL,
    SQLite releases it while it steps), then the rest (`_hybrid_on`)."""
    want = params.limit * LEG_FACTOR
    return await store.read_during(
        partial(_hybrid_on, uid, params, query, plan, want), partial(first_pass, plan, want)
    )


def _hybrid_on(
    uid: int,
    params: m.HistorySearchParams,
    query: SearchQuery,
    plan: LegPlan,
    want: int,
    conn: BlockingTx,
    first: Callable[[], FirstPass],
) -> tuple[list[m.SearchHit], LegResult]:
    """A hybrid search on the reader's thread: the thread filter's checks, the keyword leg's
    ids and the matrix extended (its facts refreshed) while the loop's thread computes the
    product (`first`: waits for it), then the meaning leg's candidates filtered (in memory),
    the fusion, the page's hits."""
    check_thread_filter(uid, params, conn)
    keyword = keyword_refs(uid, msgspec.structs.replace(params, limit=want), query, conn)
    loaded = extended_on(plan, conn)
    leg = meaning_leg_from(plan, first(), loaded, uid, params, want, conn)
    return _fused(keyword, leg.found, params, query, conn), leg


def _unit_of(found: list[Scored]) -> Callable[[KeywordRef], int | None]:
    """The unit of the meaning leg's candidates a keyword hit's entry lies in, if any."""
    spans: dict[tuple[str, str], list[tuple[int, int, int]]] = {}
    for scored in found:
        c = scored.candidate
        spans.setdefault((c.execution_id, c.role), []).append(
            (c.first_entry, c.last_entry, c.unit_id)
        )

    def unit(ref: KeywordRef) -> int | None:
        if ref.doc <= 0 or ref.execution_id is None or ref.role is None:
            return None
        for first, last, unit_id in spans.get((ref.execution_id, ref.role), ()):
            if first <= ref.doc <= last:
                return unit_id
        return None

    return unit


def _fused(
    keyword: list[KeywordRef],
    meaning: list[Scored],
    params: m.HistorySearchParams,
    query: SearchQuery,
    conn: BlockingTx,
) -> list[m.SearchHit]:
    """Both legs fused by reciprocal rank, a sub-agent's hits moved down; a hit found by
    both shows the keyword leg's snippet (its matches marked) and names both legs. A keyword
    hit inside a unit the meaning leg found is that unit's hit. Both legs are ids until
    here: only the page's hits are made (`keyword_page`, `chunk_hits`)."""
    unit_of = _unit_of(meaning)
    keyword_keys: list[_Key] = []
    shown_by: dict[_Key, KeywordRef] = {}
    legs: dict[_Key, list[str]] = {}
    demoted: set[_Key] = set()
    for ref in keyword:
        unit = unit_of(ref)
        key: _Key = ("unit", unit) if unit is not None else ("doc", ref.doc)
        keyword_keys.append(key)
        shown_by.setdefault(key, ref)
        legs.setdefault(key, ["keyword"])
        if ref.sub_agent:
            demoted.add(key)
    chunk_of: dict[_Key, int] = {}
    for scored in meaning:
        key = ("unit", scored.candidate.unit_id)
        chunk_of[key] = scored.candidate.chunk_id
        legs.setdefault(key, []).append("meaning")
        if scored.candidate.sub_agent:
            demoted.add(key)
    meaning_keys = [("unit", s.candidate.unit_id) for s in meaning]
    ranked = fuse([keyword_keys, meaning_keys], demoted=demoted)[: params.limit]
    by_keyword = keyword_page(
        params, query, [shown_by[key] for key, _ in ranked if key in shown_by], conn
    )
    by_chunk = chunk_hits(conn, params, [chunk_of[key] for key, _ in ranked if key not in shown_by])
    hits = []
    for key, score in ranked:
        shown = shown_by.get(key)
        hit = by_keyword.get(shown.doc) if shown is not None else by_chunk.get(chunk_of[key])
        if hit is not None:
            hits.append(msgspec.structs.replace(hit, score=round(score, 6), legs=legs[key]))
    return hits
