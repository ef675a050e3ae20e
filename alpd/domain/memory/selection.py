"""Which memories a new root is given, and in what order.

The thread says what it is about: its title, objective and pins, its recap's headline and
gist, and the new root's own prompt (its recent activity). `query_terms` turns that text
into at most `QUERY_TERMS_MAX` distinct words (lower-cased, three characters or more, common
English words left out, first seen first). The store ranks every active memory in scope that
holds any of those words by its full-text relevance (bm25 on SQLite, ts_rank on PostgreSQL)
and hands over the best of them, each with its score (`Candidate.relevance`, higher is more
relevant), and the newest memories in scope (score 0: recency alone). `select_memories` then
decides, in this order:

1. relevance: the store's score, highest first (a memory handed over twice counts once, at
   its higher score);
2. recency breaks ties: the most recently confirmed first, then the newer id;
3. the cap: lines are added in that order while the whole section (heading and preamble
   included) stays within `max_bytes` UTF-8 bytes; a line that does not fit is skipped and a
   shorter one after it may still fit. `max_bytes` 0, or a cap the heading alone overflows,
   gives no section at all.

Same candidates, words, cap and time: same section, byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from alpd.domain.memory.render import MemoryLine, render_line, section_head

QUERY_TERMS_MAX: Final = 64
#: a line shorter than this cannot exist (bullet, id, kind and age): below it, stop looking
MIN_LINE_BYTES: Final = 48
_WORD: Final = re.compile(r"\w+")
_STOPWORDS_TEXT: Final = """
    the and for are but not you all any can had her was one our out has him his how its may
    new now old see two way who did get let put say she too use that with have this will your
    from they been were what when where which while there their them then than into onto over
    such only also just some more most other about after before under again should would could
    does done each very here these those being because between through during without within
    alp thread run runs root
"""
STOPWORDS: Final = frozenset(_STOPWORDS_TEXT.split())


@dataclass(frozen=True, slots=True)
class Candidate:
    """An active memory's head version, as the store hands it over."""

    memory_id: str
    version: int
    kind: str
    scope: str
    text: str
    confirmed_at: str
    digest: str
    #: the full-text score against the thread's words, higher is more relevant; 0: unmatched
    relevance: float = 0.0


@dataclass(frozen=True, slots=True)
class Chosen:
    memories: tuple[Candidate, ...]
    #: the section (empty when nothing was chosen)
    text: str


def words(text: str) -> list[str]:
    return [
        word
        for word in _WORD.findall(text.lower())
        if (len(word) >= 3 or not word.isascii()) and word not in STOPWORDS
    ]


def query_terms(texts: Iterable[str], limit: int = QUERY_TERMS_MAX) -> tuple[str, ...]:
    """The distinct words of `texts`, first seen first, at most `limit`."""
    seen: dict[str, None] = {}
    for text in texts:
        for word in words(text):
            seen.setdefault(word, None)
            if len(seen) >= limit:
                return tuple(seen)
    return tuple(seen)


def rank(candidates: Iterable[Candidate]) -> list[Candidate]:
    """Most relevant first; recency, then the newer id, break ties; each memory once (at the
    place of its highest score)."""
    ordered = sorted(
        candidates, key=lambda c: (c.relevance, c.confirmed_at, c.memory_id), reverse=True
    )
    seen: set[str] = set()
    ranked: list[Candidate] = []
    for candidate in ordered:
        if candidate.memory_id not in seen:
            seen.add(candidate.memory_id)
            ranked.append(candidate)
    return ranked


def select_memories(candidates: Iterable[Candidate], *, max_bytes: int, now: str) -> Chosen:
    """The memories for a new root and their section, within `max_bytes` (module docstring)."""
    if max_bytes <= 0:
        return Chosen((), "")
    head = section_head()
    used = len(head.encode())
    if used + MIN_LINE_BYTES > max_bytes:
        return Chosen((), "")
    chosen: list[Candidate] = []
    lines: list[str] = []
    for candidate in rank(candidates):
        if max_bytes - used < MIN_LINE_BYTES:
            break
        # A line is at least its text and its id: what cannot fit is not rendered at all.
        if used + len(candidate.text) + len(candidate.memory_id) > max_bytes:
            continue
        line = render_line(
            MemoryLine(candidate.memory_id, candidate.kind, candidate.scope, candidate.text,
                       candidate.confirmed_at),
            now,
        )  # fmt: skip
        size = len(line.encode()) + 1
        if used + size <= max_bytes:
            chosen.append(candidate)
            lines.append(line)
            used += size
    if not chosen:
        return Chosen((), "")
    return Chosen(tuple(chosen), head + "".join(line + "\n" for line in lines))


__all__ = [
    "MIN_LINE_BYTES",
    "QUERY_TERMS_MAX",
    "Candidate",
    "Chosen",
    "query_terms",
    "rank",
    "select_memories",
    "words",
]
