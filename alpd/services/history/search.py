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
from functools import partial
from typing import Final

import msgspec

from alpd.domain.history.fusion import fuse
from alpd.errors import InvalidArgument, SearchIndexNotReady
from alpd.services.context import Caller
from alpd.services.history.meaning import MeaningIndex
from alpd.store.db import BlockingTx, Store
from alpd.store.entry_rows import fold_text, has_cjk
from alpd.store.history.search import SearchQuery, check_thread_filter, keyword_hits, search_on
from alpd.store.history.vectors import units_of_entries
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
    await store.read(partial(check_thread_filter, caller.uid, params))
    want = params.limit if params.mode == "meaning" else params.limit * LEG_FACTOR
    found = await meaning.leg(caller.uid, params, want)
    if found is None:
        notice = "the meaning index's model cannot be loaded to embed the query"
        if params.mode == "meaning":
            raise SearchIndexNotReady(notice, state=state.state)
        result = await store.read(partial(search_on, caller.uid, params, query))
        return msgspec.structs.replace(result, mode="keyword", meaning=state, notice=notice)
    if params.mode == "meaning":
        hits = [
            msgspec.structs.replace(hit, score=round(score, 6), legs=["meaning"])
            for _, score, hit in found
        ]
        return m.HistorySearchResult(hits=hits, index="meaning", mode="meaning", meaning=state)
    wide = msgspec.structs.replace(params, limit=want)
    keyword = await store.read(partial(_keyword_leg, caller.uid, wide, query))
    return m.HistorySearchResult(
        hits=_fused(keyword, found, params.limit),
        index=query.index,
        expression=query.expression,
        mode="hybrid",
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


def _keyword_leg(
    uid: int, params: m.HistorySearchParams, query: SearchQuery, conn: BlockingTx
) -> list[tuple[_Key, m.SearchHit]]:
    """The keyword leg's hits keyed for fusion: an entry inside a unit of the meaning index
    by that unit, another entry by its id, a thread document by its (negative) id."""
    hits = keyword_hits(uid, params, query, conn)
    units = units_of_entries(
        conn,
        [
            (doc, hit.execution_id, hit.role)
            for doc, hit in hits
            if doc > 0 and hit.execution_id is not None and hit.role in ("user", "assistant")
        ],
    )
    return [(("unit", units[doc]) if doc in units else ("doc", doc), hit) for doc, hit in hits]


def _fused(
    keyword: list[tuple[_Key, m.SearchHit]],
    meaning: list[tuple[int, float, m.SearchHit]],
    limit: int,
) -> list[m.SearchHit]:
    """Both legs fused by reciprocal rank; a hit found by both shows the keyword leg's
    snippet (its matches marked) and names both legs."""
    shown: dict[_Key, m.SearchHit] = {}
    legs: dict[_Key, list[str]] = {}
    for key, hit in keyword:
        shown.setdefault(key, hit)
        legs.setdefault(key, ["keyword"])
    for unit_id, _, hit in meaning:
        key = ("unit", unit_id)
        shown.setdefault(key, hit)
        legs.setdefault(key, []).append("meaning")
    ranked = fuse([[key for key, _ in keyword], [("unit", unit) for unit, _, _ in meaning]])
    return [
        msgspec.structs.replace(shown[key], score=round(score, 6), legs=legs[key])
        for key, score in ranked[:limit]
    ]
