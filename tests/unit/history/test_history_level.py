"""A thread's history level is the worst of its roots': complete > partial > final-only >
unsupported (docs/history.md), with `pending` just below complete."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from alpd.services.history.summary import LEVEL_ORDER, history_level

BEST_FIRST = ["complete", "pending", "partial", "final-only", "unsupported"]


def test_the_order_is_the_documented_one() -> None:
    assert list(reversed(LEVEL_ORDER)) == BEST_FIRST


def test_an_unsupported_root_makes_the_thread_unsupported() -> None:
    for other in ("complete", "pending", "partial", "final-only"):
        assert history_level([other, "unsupported"]) == "unsupported"
        assert history_level(["unsupported", other]) == "unsupported"


def test_each_level_beats_only_the_ones_after_it() -> None:
    for better_at, better in enumerate(BEST_FIRST):
        for worse in BEST_FIRST[better_at:]:
            assert history_level([better, worse]) == worse, (better, worse)


def test_no_roots_is_complete() -> None:
    assert history_level([]) == "complete"


@given(st.lists(st.sampled_from(BEST_FIRST), min_size=1))
def test_the_thread_level_is_one_of_its_roots_and_none_is_worse(levels: list) -> None:
    level = history_level(levels)
    assert level in levels
    assert all(BEST_FIRST.index(other) <= BEST_FIRST.index(level) for other in levels)
