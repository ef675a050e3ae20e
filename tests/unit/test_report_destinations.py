"""Where a report goes (alpd.domain.report_destinations): what `--to` accepts and refuses,
and which doors and threads a resolved `report_to` names."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alpd.domain import report_destinations as dest

WORDS = st.sampled_from(["chats", "telegram", "wechat", "TELEGRAM", " wechat ", "thread:ops",
                         "thread:@last", "Thread: x"])  # fmt: skip


def test_each_form_is_read() -> None:
    assert dest.parse(["telegram", "thread:ops ", "CHATS"]) == [
        ("telegram", ""), ("thread", "ops"), ("chats", ""),
    ]  # fmt: skip
    assert dest.parse(["none"]) == [("none", "")]


@pytest.mark.parametrize(
    ("values", "words"),
    [
        (["sms"], "unknown destination"),
        (["thread:"], "names a thread"),
        (["none", "chats"], "cannot be named with others"),
        (["telegram"] * 9, "at most 8"),
    ],
)
def test_a_bad_to_says_what_to_type(values: list[str], words: str) -> None:
    with pytest.raises(dest.BadDestination, match=words):
        dest.parse(values)


@given(st.lists(WORDS, max_size=8))
def test_parse_keeps_order_and_drops_repeats(values: list[str]) -> None:
    parsed = dest.parse(values)
    assert len(parsed) == len(set(parsed))
    assert all(kind in ("chats", "telegram", "wechat", "thread") for kind, _ in parsed)


@given(
    st.none() | st.lists(st.sampled_from(["chats", "telegram", "wechat", "none", "thread:t_1"])),
    st.lists(st.sampled_from(["telegram", "wechat"]), unique=True),
)
def test_chat_doors_are_running_ones_it_names(
    report_to: list[str] | None, doors: list[str]
) -> None:
    chosen = dest.chat_doors(report_to, doors)
    assert set(chosen) <= set(doors)
    if report_to is None or "chats" in report_to:
        assert chosen == doors
    else:
        assert set(chosen) == set(doors) & set(report_to)
    assert dest.threads(report_to) == ["t_1"] * (report_to or []).count("thread:t_1")
