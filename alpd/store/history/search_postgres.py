"""`history/search` on PostgreSQL (docs/many-machines.md): the statements and snippets that
differ from SQLite's FTS5 ones in `alpd.store.history.search`.

* `words`: the GIN index of `search_words.words`, `alp_words(body)` stored (the schema's: the
  body folded, cut into runs of letters and digits as unicode61 cuts it; stored since
  migration 30, so ranking a match does not fold its body again), the query's FTS5 literals
  as a `to_tsquery` (`tsquery_text`), best `ts_rank` first; the snippet is made here from the
  document as stored (`words_snippet`), the matched words marked as FTS5's `snippet()` marks
  them (PostgreSQL's `ts_headline` would not mark `Đường` for `duong`). The match is read
  through `alp_words_matching` (migration 36): as a person, row-level security keeps the
  non-LEAKPROOF `@@` out of the index, and the function matches with the admin's rights and
  the person's filter written in.
* `trigram`: every term a substring (`LIKE`, ILIKE once translated) of the CJK-like documents
  of `search_cjk`, through its pg_trgm GIN index; newest first, snippets as the LIKE search's.
  The longest term is matched through `alp_cjk_matching` (migration 37, as `@@` is through
  36's: `LIKE` is not LEAKPROOF either), the others on the person's documents it returns.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections import deque
from typing import Final

from alpd.store.entry_rows import fold_text
from alpd.store.history.search import (
    HIT_COLUMNS,
    HIT_JOINS,
    LIKE_CONTEXT_CHARS,
    SNIPPET_TOKENS,
    Params,
    SearchQuery,
    like_pattern,
)
from protocol import messages as m

__all__ = ["search_sql_postgres", "tsquery_text", "words_snippet"]


def search_sql_postgres(
    params: m.HistorySearchParams, query: SearchQuery, filters: str, p: Params
) -> str:
    """The statement of a `words` or `trigram` query (`like` is the same on both)."""
    if query.index == "trigram":
        return _trigram_sql(query.terms, filters, p, params.limit)
    return _ranked_sql(filters, p, query.expression, params.limit)


def _ranked_sql(filters: str, p: Params, expression: str, limit: int) -> str:
    """`ranked_sql` on PostgreSQL: the GIN index of `search_words.words` (`alp_words(body)`,
    stored), `ts_rank` (higher is better: the score is its negation, so both backends order
    ascending), and the document as stored, whose snippet `words_snippet` makes (PostgreSQL's
    `ts_headline` would mark only what matches unfolded: not `Đường` for `duong`)."""
    query = f"to_tsquery('simple', alp_fold({p('expression', tsquery_text(expression))}))"
    return f"""
    WITH page AS (
        SELECT f.rowid AS doc, -ts_rank(f.words, {query}) AS score
        FROM alp_words_matching({query}) f {HIT_JOINS.format(doc="f.rowid")}
        WHERE {filters}
        ORDER BY score, f.rowid LIMIT {p("limit", limit)}
    )
    SELECT page.doc, page.score, s.body AS words_body, {HIT_COLUMNS}
    FROM page JOIN search_docs s ON s.id = page.doc
    {HIT_JOINS.format(doc="page.doc")}
    ORDER BY page.score, page.doc
    """


def tsquery_text(expression: str) -> str:
    """A `SearchQuery.expression` (FTS5 string literals, each a phrase, `*` after one a
    prefix) as `to_tsquery` text: each literal's words (runs of letters and digits, as
    `alp_words` cuts the documents) joined by `<->`, the literals by `&`. Only letters and
    digits reach it, so no input is read as tsquery syntax."""
    literals = []
    for literal, prefix in _FTS_LITERAL.findall(expression):
        words = _WORD.findall(literal.replace('""', '"'))
        if words:
            quoted = [f"'{word}'" for word in words]
            if prefix:
                quoted[-1] += ":*"
            literals.append(" <-> ".join(quoted))
    # no word at all: an empty query, which matches nothing
    return " & ".join(literals)


_FTS_LITERAL: Final = re.compile(r'"((?:[^"]|"")*)"(\*?)')
_WORD: Final = re.compile(r"[^\W_]+")


def _query_words(expression: str) -> list[tuple[str, bool]]:
    """The folded words of an expression, each with whether it is a prefix."""
    found: list[tuple[str, bool]] = []
    for literal, prefix in _FTS_LITERAL.findall(expression):
        words = [_folded(word) for word in _WORD.findall(literal.replace('""', '"'))]
        found += [(word, bool(prefix) and i == len(words) - 1) for i, word in enumerate(words)]
    return found


def _folded(word: str) -> str:
    """A word as unicode61 with remove_diacritics 2 indexes it: folded, lower case, no marks."""
    if word.isascii():
        return word.lower()  # most words: nothing to fold (the bench's snippets: 7 ms → ~1)
    decomposed = unicodedata.normalize("NFKD", fold_text(word).lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def words_snippet(body: str, expression: str, start: str, end: str) -> str:
    """FTS5's `snippet()` for PostgreSQL's rows: about `SNIPPET_TOKENS` words of `body` from
    a little before the first word the query matched, every matched word marked as stored."""
    wanted = _query_words(expression)
    exact = {w for w, prefix in wanted if not prefix}
    prefixes = tuple(w for w, prefix in wanted if prefix)

    def matches(span: tuple[int, int]) -> bool:
        word = _folded(body[span[0] : span[1]])
        return word in exact or word.startswith(prefixes)

    # The words are cut lazily: up to the first match (keeping only the few the window may
    # start with), then those of the window and one more; a long body's tail is never cut
    # (the bench: its 20 hits' bodies were each cut whole, ~2 ms a search).
    words = (match.span() for match in _WORD.finditer(body))
    kept: deque[tuple[int, int]] = deque(maxlen=SNIPPET_TOKENS // 4 + 1)
    head: list[tuple[int, int]] = []  # the window when nothing matches
    read = 0
    hit: list[tuple[int, int]] = []
    for span in words:
        read += 1
        kept.append(span)
        if len(head) < SNIPPET_TOKENS:
            head.append(span)
        if matches(span):
            hit.append(span)
            break
    if not kept:
        return body[: LIKE_CONTEXT_CHARS * 2]
    if hit:
        first = read - len(kept)
        after = list(itertools.islice(words, SNIPPET_TOKENS - len(kept)))
        window = [*kept, *after]
        hit += [span for span in after if matches(span)]
        more = next(words, None) is not None
    else:
        first, window, more = 0, head, read > len(head)
    left, right = window[0][0], window[-1][1]
    pieces, at = [], left
    for word_start, word_end in hit:
        pieces += [body[at:word_start], start, body[word_start:word_end], end]
        at = word_end
    pieces.append(body[at:right])
    return ("…" if first else "") + "".join(pieces) + ("…" if more else "")


def _trigram_sql(terms: tuple[str, ...], filters: str, p: Params, limit: int) -> str:
    """The trigram search on PostgreSQL: every term a substring of the document, through the
    pg_trgm GIN index of `search_cjk`; newest first, snippets made from the body
    (`like_snippet`), as the LIKE search's."""
    longest = max(range(len(terms)), key=lambda i: len(terms[i]))
    likes = "".join(
        f"c.body LIKE {p(f'like{i}', like_pattern(term))} ESCAPE '\\' AND "
        for i, term in enumerate(terms)
        if i != longest
    )
    matching = f"alp_cjk_matching({p('like', like_pattern(terms[longest]))})"
    return f"""
    SELECT c.rowid AS doc, 0.0 AS score, c.body AS body, {HIT_COLUMNS}
    FROM {matching} c {HIT_JOINS.format(doc="c.rowid")}
    WHERE {likes}{filters}
    ORDER BY coalesce(h.ts, t.updated_at) DESC, c.rowid DESC LIMIT {p("limit", limit)}
    """
