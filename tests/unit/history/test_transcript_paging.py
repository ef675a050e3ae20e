"""The transcript's cursors and pages (alpd.domain.history.transcript), pure: a cursor
round-trips, a foreign one is refused, and walking pages either way meets every item once."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alpd.domain.history.transcript import (
    END,
    START,
    CursorInvalidError,
    EntryRow,
    EventRow,
    Key,
    RootRow,
    ToolHalf,
    TranscriptRows,
    build_page,
    decode_cursor,
    encode_cursor,
    page_bound,
)

keys = st.tuples(st.integers(0, 2**40), st.integers(0, 9), st.integers(0, 2**53))


@given(keys)
def test_a_cursor_round_trips(key: Key) -> None:
    assert decode_cursor(encode_cursor(key)) == key


@pytest.mark.parametrize("bad", ["x", "t1.", "t1.!!", "t1.MS4y", "t1." + "A" * 100])
def test_a_foreign_cursor_is_refused(bad: str) -> None:
    with pytest.raises(CursorInvalidError):
        decode_cursor(bad)


def test_no_cursor_is_the_newest_page_and_an_empty_after_the_start() -> None:
    assert page_bound(None, None) == ("before", END)
    assert page_bound(None, "") == ("after", START)
    with pytest.raises(CursorInvalidError):
        page_bound("", "")


def _event(key: Key) -> EventRow:
    none = dict.fromkeys(("root_id", "execution_id", "at", "envelope", "source", "status"))
    return EventRow(key=key, type="push", text="t", other_thread=None, ref=None, **none)


def _past(rows: list[EventRow], direction: str, bound: Key, limit: int) -> TranscriptRows:
    """What the store hands the page: the `limit + 1` rows nearest past the bound."""
    if direction == "before":
        chosen = sorted((r for r in rows if r.key < bound), key=lambda r: r.key)[-(limit + 1) :]
    else:
        chosen = sorted((r for r in rows if r.key > bound), key=lambda r: r.key)[: limit + 1]
    return TranscriptRows(roots=[], events=chosen, entries=[])


@given(st.sets(keys, max_size=40), st.integers(1, 7))
def test_walking_pages_either_way_meets_every_item_once(keys_: set[Key], limit: int) -> None:
    rows = [_event(k) for k in keys_]
    every = [encode_cursor(k) for k in sorted(keys_)]
    forward: list[str] = []
    direction, bound = page_bound(None, "")
    while True:
        page = build_page("t", _past(rows, direction, bound, limit), direction, bound, limit)
        forward += [item.cursor for item in page.items]
        if not page.more_after:
            break
        direction, bound = page_bound(None, page.next)
    assert forward == every
    backward: list[str] = []
    direction, bound = page_bound(None, None)
    while True:
        page = build_page("t", _past(rows, direction, bound, limit), direction, bound, limit)
        backward = [item.cursor for item in page.items] + backward
        if not page.more_before:
            break
        assert page.previous is not None
        direction, bound = page_bound(page.previous, None)
    assert backward == every


def _entry(n: int, kind: str, half: ToolHalf | None = None) -> EntryRow:
    return EntryRow(key=(1, 2, n), root_id="r", execution_id="r", role="assistant", kind=kind,
                    text="", tool_name="Bash", tool_input='{"command": "ls -la"}',
                    output_tail="a\n" * 300, is_error=False, call_id="c", at=None, model=None,
                    other_half=half)  # fmt: skip


def test_a_tool_call_carries_its_result_shortened_and_the_result_is_not_shown_twice() -> None:
    root = RootRow(id="r", sequence=1, runtime="claude", agent="default", kind="interactive",
                   origin='{"door":"cli","by":"uid:1"}', status="settled", outcome="completed",
                   cost_usd=0.5, created_at=None, started_at=None, settled_at=None,
                   native_session_id=None, reads="r", labels=("undone",))  # fmt: skip
    call = _entry(10, "tool_call", ToolHalf(entry_id=11, text="x" * 500, is_error=True))
    result = _entry(11, "tool_result", ToolHalf(entry_id=10, text="", is_error=False))
    rows = TranscriptRows(roots=[root], events=[], entries=[call, result])
    page = build_page("t", rows, "after", START, 10)
    [item] = page.items
    assert item.type == "tool" and item.tool is not None
    assert item.tool.name == "Bash" and item.tool.is_error and item.tool.truncated
    assert item.tool.result is not None and len(item.tool.result) == 200
    assert item.labels == ["undone"] and page.roots[0].cost_usd == 0.5
    full = build_page("t", rows, "after", START, 10, full=True)
    assert full.items[0].tool is not None and full.items[0].tool.result == "x" * 500
