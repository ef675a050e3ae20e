"""The page's formatting (alpd.web.view): durations, money, times, context, snippets."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from alpd.web.listing import thread_row
from alpd.web.view import (
    MARK_END,
    MARK_START,
    ago,
    context_sections,
    duration,
    money,
    snippet_parts,
)
from protocol import messages as m


def test_duration_shows_the_two_largest_units() -> None:
    assert duration(None) == "—"
    assert duration(0) == "0 s"
    assert duration(45.4) == "45 s"
    assert duration(184) == "3 min 4 s"
    assert duration(3600) == "1 h"
    assert duration(2 * 3600 + 5 * 60 + 9) == "2 h 5 min"
    assert duration(86_400 + 3600) == "1 d 1 h"


@given(st.floats(min_value=0, max_value=1e8, allow_nan=False))
def test_duration_is_never_empty_and_has_at_most_two_units(seconds: float) -> None:
    shown = duration(seconds)
    assert shown and len(shown.split(" ")) in (2, 4)


def test_money() -> None:
    assert money(None) == "—"
    assert money(0) == "$0.00"
    assert money(0.0042) == "$0.0042"
    assert money(1.234) == "$1.23"


@given(st.integers(min_value=0, max_value=10**7))
def test_ago_names_one_unit_before_now(seconds: int) -> None:
    now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    then = (now - timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")
    shown = ago(then, now)
    assert shown == "just now" if seconds < 5 else shown.endswith(" ago")


def test_context_sections_keep_each_lines_source_in_order() -> None:
    snapshot = {
        "objective": {"id": "ln_1", "text": "ship it", "sourceExecutionId": "exe_a"},
        "decisions": [{"id": "ln_2", "text": "use sqlite", "sourceExecutionId": "exe_b"}],
        "constraints": [],
    }
    sections = context_sections(snapshot)
    assert [s.title for s in sections] == ["Objective", "Decisions"]
    assert sections[1].items[0].source == "exe_b"


@given(st.lists(st.tuples(st.text(alphabet="ab <>&*", max_size=8), st.booleans()), max_size=6))
def test_snippet_parts_round_trip_the_marked_text(runs: list[tuple[str, bool]]) -> None:
    snippet = "".join(f"{MARK_START}{text}{MARK_END}" if marked else text for text, marked in runs)
    parts = snippet_parts(snippet)
    assert "".join(text for text, _ in parts) == "".join(text for text, _ in runs)
    assert all(text for text, _ in parts)
    marked = "".join(text for text, m in parts if m)
    assert marked == "".join(text for text, m in runs if m)


def test_a_thread_row_escapes_what_a_person_chose() -> None:
    thread = m.Thread(
        id="thread_1",
        title='<script>alert("x")</script>',
        workspace="/home/a&b",
        status="closed",
        revision=1,
        context_revision=0,
        owner_uid=0,
        created_at="2026-11-30T12:00:00.000Z",
        updated_at="2026-11-30T11:00:00.000Z",
        busy_root="exec_1",
        last_kind="push",
    )
    row = thread_row(thread, datetime(2026, 11, 30, 12, 0, tzinfo=UTC))
    assert "<script>" not in row and "&lt;script&gt;" in row and "&quot;x&quot;" in row
    assert "/home/a&amp;b" in row and "1 h ago" in row
    assert 'class="thread busy"' in row and ">closed<" in row and ">push<" in row


def test_a_thread_row_shows_the_recaps_headline_escaped() -> None:
    thread = m.Thread(
        id="thread_1", title="t", workspace="/w", status="open", revision=1,
        context_revision=0, owner_uid=0, created_at="2026-11-30T12:00:00.000Z",
        updated_at="2026-11-30T12:00:00.000Z", headline="fix <the> build",
    )  # fmt: skip
    row = thread_row(thread, datetime(2026, 11, 30, 12, 0, tzinfo=UTC))
    assert '<p class="headline">fix &lt;the&gt; build</p>' in row
