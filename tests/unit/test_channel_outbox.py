"""The chat outbox's rules (alpd.domain.channel_outbox) and the chat door's cut: never more
than `per_minute` messages a chat in any 60 s, nothing during quiet hours, a thread's
notices coalesced, nothing lost or repeated within the caps."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from alpd.channels.chat import cut
from alpd.domain.channel_outbox import LINES_PER_NOTICE, Outbox
from alpd.domain.channel_settings import in_quiet_hours


@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 5)), max_size=200),
    st.integers(1, 10),
)
def test_no_chat_gets_more_than_its_rate_and_every_thread_is_sent_once(
    posts: list[tuple[int, int]], per_minute: int
) -> None:
    box = Outbox(kinds=("reports",), per_minute=per_minute, quiet=None)
    for chat, thread in posts:
        box.post(f"c{chat}", f"t{thread}", f"T{thread}", "reports", "line")
    sent: list[tuple[str, str]] = []
    for second in range(0, 3600, 5):
        batch = box.due(float(second), 600)
        for chat in {c for c, _ in batch}:
            window = [c for c, _ in batch if c == chat]
            assert len(window) <= per_minute
        sent += batch
    assert box.waiting() == 0
    assert len(sent) == len({(f"c{c}", f"t{t}") for c, t in posts})


def test_a_threads_notices_coalesce_and_quiet_hours_hold_them() -> None:
    box = Outbox(kinds=("reports", "failures"), per_minute=5, quiet=(23 * 60, 7 * 60))
    for n in range(LINES_PER_NOTICE + 3):
        box.post("c", "t", "ops", "reports", f"report {n}")
    assert not box.post("c", "t", "ops", "handoffs", "not wanted")
    assert box.due(0.0, 23 * 60 + 30) == []
    assert box.due(1.0, 2 * 60) == []
    [(chat, text)] = box.due(2.0, 7 * 60)
    assert chat == "c" and text.startswith("ops\nreport 0") and text.endswith("+3 more")


def test_quiet_hours_span_midnight() -> None:
    assert in_quiet_hours((23 * 60, 7 * 60), 0) and not in_quiet_hours((23 * 60, 7 * 60), 12 * 60)
    assert in_quiet_hours((9 * 60, 17 * 60), 10 * 60) and not in_quiet_hours(None, 0)


@given(st.text(max_size=3000), st.integers(20, 500))
def test_cut_loses_nothing_but_the_blanks_at_the_cut(text: str, limit: int) -> None:
    head, rest = cut(text, limit)
    assert len(head) <= limit
    assert head + rest == text or "".join((head + rest).split()) == "".join(text.split())
