"""Titles close to a name that matched no thread: the did-you-mean of a mistyped title.

`alp thread show "pricng page"` named nothing; a title that contains the words is offered
first (`alpd.services.threads.refs`), and when none does, the titles that look like it:
difflib's ratio (the stdlib's `get_close_matches`) over the titles ignoring case, at least
`CUTOFF` alike, the closest first, at most `limit`. Pure: the titles are given, newest first,
already bounded by the caller (`TITLES_COMPARED`), so a home of many threads costs the same.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Final

#: how alike (difflib's ratio, 0..1) a title must be to be offered: difflib's own default,
#: which takes one or two letters wrong, missing or swapped in a short title
CUTOFF: Final = 0.6
#: how many of the owner's titles (newest first) are compared
TITLES_COMPARED: Final = 2000


def close_titles(name: str, titles: Sequence[str], *, limit: int) -> list[int]:
    """The indexes in `titles` of those close to `name` ignoring case, closest first (ties:
    the earlier, i.e. the newer, first); each distinct title once."""
    wanted = name.casefold().strip()
    if not wanted or limit < 1:
        return []
    first: dict[str, int] = {}
    for index, title in enumerate(titles):
        first.setdefault(title.casefold(), index)
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(wanted)  # difflib caches what it learns of the second sequence
    scored: list[tuple[float, int]] = []
    for folded, index in first.items():
        matcher.set_seq1(folded)
        # get_close_matches' order: two cheap upper bounds before the real ratio
        if matcher.real_quick_ratio() < CUTOFF or matcher.quick_ratio() < CUTOFF:
            continue
        ratio = matcher.ratio()
        if ratio >= CUTOFF:
            scored.append((-ratio, index))
    return [index for _ratio, index in sorted(scored)[:limit]]


__all__ = ["CUTOFF", "TITLES_COMPARED", "close_titles"]
