"""Reports as pure data: the final message (last reply, else the output's last lines),
capped from its end, secret-filtered; and a notification short enough for a desktop."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alpd.desktop import notifier_argv
from alpd.domain.conversation.reports import (
    MESSAGE_MAX_CHARS,
    TAIL_LINES,
    final_message,
    last_lines,
    notification,
)

SECRET = "ghp_" + "a1B2" * 9


def test_the_last_reply_wins_over_the_output() -> None:
    message = final_message("All 12 checks passed.", "noise\nmore noise")
    assert (message.text, message.source) == ("All 12 checks passed.", "transcript")


def test_without_a_reply_the_report_is_the_outputs_last_lines() -> None:
    output = "\n".join(f"line {i}" for i in range(100)) + "\n\n"
    message = final_message(None, output)
    assert message.source == "output"
    assert message.text.splitlines() == [f"line {i}" for i in range(100 - TAIL_LINES, 100)]
    assert final_message("   ", "done").text == "done"


def test_a_long_message_keeps_its_end_and_says_what_was_cut() -> None:
    reply = "start " + "x" * 10_000 + " conclusion"
    message = final_message(reply, None)
    assert len(message.text) == MESSAGE_MAX_CHARS
    assert message.text.startswith("[… earlier output cut]") and message.text.endswith("conclusion")


def test_secrets_never_reach_the_report() -> None:
    message = final_message(f"deployed with token {SECRET}", None)
    assert SECRET not in message.text and message.redactions == 1
    assert "[REDACTED:" in message.text


@given(st.text(), st.integers(min_value=1, max_value=50))
def test_last_lines_is_a_suffix_of_at_most_n_lines(text: str, n: int) -> None:
    tail = last_lines(text, n)
    assert len(tail.split("\n")) <= n
    assert text.rstrip().endswith(tail)


@given(st.text(max_size=300), st.text(max_size=2000), st.none() | st.floats(0, 1000))
def test_a_notification_is_a_short_title_and_body(
    title: str, message: str, cost: float | None
) -> None:
    heading, body = notification(
        thread_title=title, kind="push", outcome="completed", message=message, cost_usd=cost
    )
    assert heading.startswith("alp · ") and "\n" not in heading and len(heading) <= 66
    assert body.startswith("push run completed") and len(body) <= 320
    assert len(body.splitlines()) <= 1


def test_no_notifier_means_no_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    assert notifier_argv("t", "b", platform="linux") is None
    assert notifier_argv("t", "b", platform="darwin") is None
