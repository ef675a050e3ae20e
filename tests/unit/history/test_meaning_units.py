"""The meaning index's pure parts: units, prefix-stable chunks, reciprocal rank fusion."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from alpd.domain.history.fusion import fuse
from alpd.domain.history.units import (
    MAX_CHUNK_CHARS,
    MAX_UNIT_CHARS,
    EntryText,
    OpenRun,
    chunk_spans,
    chunk_unit,
    cut_units,
)

TEXT = st.text(alphabet=st.sampled_from("ab \n"), max_size=3000)


@given(TEXT, TEXT)
def test_appending_text_changes_only_the_last_chunk(text: str, more: str) -> None:
    before = chunk_spans(text, 50)
    after = chunk_spans(text + more, 50)
    assert after[: max(0, len(before) - 1)] == before[:-1]


@given(TEXT)
def test_chunks_cover_the_text_in_order_within_the_bound(text: str) -> None:
    spans = chunk_spans(text, 50)
    assert "".join(text[a:b] for a, b in spans) == text
    assert all(0 < b - a <= 50 for a, b in spans)


def entry(id: int, role: str, kind: str, text: str | None, execution: str = "x") -> EntryText:
    return EntryText(id, execution, role, kind, text)


def test_units_are_turns_and_runs_of_assistant_text_never_tool_output() -> None:
    units, open_runs = cut_units(
        [
            entry(1, "user", "prompt", "how do we price it?"),
            entry(2, "assistant", "reply", "Let me look."),
            entry(3, "assistant", "tool_call", None),
            entry(4, "tool", "tool_result", "secret output"),
            entry(5, "assistant", "reply", "Three tiers."),
            entry(6, "user", "prompt", "ok"),
            entry(7, "assistant", "reply", "Done."),
            entry(8, "assistant", "reply", None),  # a copy
        ],
        {},
    )
    assert [(u.role, u.text) for u in units] == [
        ("user", "how do we price it?"),
        ("assistant", "Let me look.\n\nThree tiers."),
        ("user", "ok"),
        ("assistant", "Done."),
    ]
    assert open_runs["x"] is units[-1]


def test_an_open_run_grows_across_reads_and_keeps_its_chunks() -> None:
    first, _ = cut_units([entry(1, "assistant", "reply", "a " * 700)], {})
    run = OpenRun(9, "x", 1, 1, ((1, "a " * 700),))
    grown, _ = cut_units([entry(2, "assistant", "reply", "b " * 700)], {"x": run})
    assert len(grown) == 1 and grown[0].unit_id == 9 and grown[0].first_entry == 1
    old, new = chunk_unit(first[0]), chunk_unit(grown[0])
    assert [c.digest for c in old[:-1]] == [c.digest for c in new[: len(old) - 1]]
    assert new[-1].entry_id == 2


def test_a_run_stops_growing_at_its_bound() -> None:
    long = "word " * (MAX_UNIT_CHARS // 5)
    units, _ = cut_units(
        [entry(1, "assistant", "reply", long), entry(2, "assistant", "reply", "next")], {}
    )
    assert [u.first_entry for u in units] == [1, 2]
    assert all(c.length <= MAX_CHUNK_CHARS for c in chunk_unit(units[0]))


def test_rrf_puts_what_both_legs_found_first_and_is_deterministic() -> None:
    fused = fuse([["a", "b", "c"], ["c", "d"]])
    assert [key for key, _ in fused] == ["c", "a", "b", "d"]  # b and d tie: first seen first
    assert fused[0][1] == 1 / 63 + 1 / 61


@given(st.lists(st.lists(st.integers(0, 20), max_size=30), max_size=3))
def test_rrf_scores_every_key_once_by_its_best_rank(legs: list[list[int]]) -> None:
    fused = fuse(legs)
    assert len({key for key, _ in fused}) == len(fused) == len({k for leg in legs for k in leg})
    assert [s for _, s in fused] == sorted((s for _, s in fused), reverse=True)


def test_a_sub_agents_hit_is_moved_down_five_ranks_in_each_leg() -> None:
    # "s" (a sub-agent's) leads both legs; demoted, it counts as rank 6 in each
    fused = fuse([["s", "a", "b"], ["s", "b", "a"]], demoted={"s"})
    assert [key for key, _ in fused] == ["a", "b", "s"]
    assert dict(fused)["s"] == 2 / (60 + 6)
    # without the demotion it leads
    assert fuse([["s", "a", "b"], ["s", "b", "a"]])[0][0] == "s"


@given(st.lists(st.lists(st.integers(0, 30), max_size=20), max_size=3), st.sets(st.integers(0, 30)))
def test_demotion_lowers_only_the_demoted_and_never_drops_a_key(
    legs: list[list[int]], demoted: set[int]
) -> None:
    plain, moved = dict(fuse(legs)), dict(fuse(legs, demoted=demoted))
    assert plain.keys() == moved.keys()
    for key, score in moved.items():
        assert score < plain[key] if key in demoted else score == plain[key]
