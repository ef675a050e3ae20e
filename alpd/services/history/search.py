"""`history/search`: full-text search over history entries, thread titles and context lines.

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

from alpd.errors import InvalidArgument
from alpd.services.context import Caller
from alpd.store.db import Store
from alpd.store.entry_rows import fold_text, has_cjk
from alpd.store.history.search import SearchQuery, search_on
from protocol import messages as m

__all__ = ["MAX_LIMIT", "MAX_TERMS", "parse_query", "search"]

MAX_LIMIT: Final = 200
MAX_TERMS: Final = 32
MAX_QUERY_CHARS: Final = 1000

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
    store: Store, caller: Caller, params: m.HistorySearchParams
) -> m.HistorySearchResult:
    """Hits for `params.query` across the caller's threads and legacy imports, best first."""
    if not 1 <= params.limit <= MAX_LIMIT:
        raise InvalidArgument(f"limit must be 1..{MAX_LIMIT}", limit=params.limit)
    query = parse_query(params.query)
    return await store.read(partial(search_on, caller.uid, params, query))
