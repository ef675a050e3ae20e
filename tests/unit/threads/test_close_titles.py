"""The did-you-mean of a mistyped thread title (alpd.domain.threads.names), as properties."""

from __future__ import annotations

import difflib

from hypothesis import given
from hypothesis import strategies as st

from alpd.domain.threads.names import CUTOFF, close_titles

TITLES = st.lists(st.text(min_size=1, max_size=30), max_size=40)


def test_a_letter_or_two_off_finds_the_title_and_not_the_others() -> None:
    titles = ["billing", "pricing page", "Pricing Pages", "checkout flow", "pricing page"]
    assert close_titles("pricng page", titles, limit=10) == [1, 2]  # each title once
    assert close_titles("PRICING PAEG", titles, limit=1) == [1]
    assert close_titles("chekout flow", titles, limit=10) == [3]
    assert close_titles("deploy", titles, limit=10) == []
    assert close_titles("  ", titles, limit=10) == []


@given(TITLES, st.text(max_size=30), st.integers(0, 12))
def test_offered_titles_are_alike_distinct_bounded_and_closest_first(
    titles: list[str], name: str, limit: int
) -> None:
    chosen = close_titles(name, titles, limit=limit)
    assert len(chosen) <= limit
    folded = [titles[i].casefold() for i in chosen]
    assert len(set(folded)) == len(folded)
    wanted = name.casefold().strip()
    ratios = [difflib.SequenceMatcher(None, f, wanted).ratio() for f in folded]
    assert all(r >= CUTOFF for r in ratios)
    assert ratios == sorted(ratios, reverse=True)
    # each offered index is the first (newest) of the titles folding to it
    assert all(min(j for j, t in enumerate(titles) if t.casefold() == f) == i
               for i, f in zip(chosen, folded, strict=True))  # fmt: skip


@given(TITLES, st.data())
def test_an_existing_title_in_another_case_is_offered_first(
    titles: list[str], data: st.DataObject
) -> None:
    stripped = [t for t in titles if t.strip() == t and t.strip()]
    if not stripped:
        return
    title = data.draw(st.sampled_from(stripped))
    chosen = close_titles(title.swapcase(), titles, limit=3)
    if title.swapcase().casefold() == title.casefold():
        assert titles[chosen[0]].casefold() == title.casefold()
