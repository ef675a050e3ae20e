"""Reports as pure data: the final message (last reply, else the output's last lines),
capped from its end, secret-filtered; and a notification short enough for a desktop."""

from __future__ import annotations

import json

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
from alpd.domain.secrets.filter import redact
from protocol.runtime_output import first_error_line

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


def _claude_not_logged_in() -> str:
    """What `claude -p --output-format stream-json` prints when it is not logged in: an init
    event, a synthetic assistant message, then a failed result — kilobytes of JSON."""
    init = {"type": "system", "subtype": "init", "tools": ["Bash"] * 200, "session_id": "s"}
    said = {"type": "assistant", "message": {"content": [{"type": "text",
            "text": "Not logged in · Please run /login"}]}}  # fmt: skip
    result = {"type": "result", "subtype": "success", "is_error": True,
              "result": "Not logged in · Please run /login", "total_cost_usd": 0}  # fmt: skip
    return "\n".join(json.dumps(event) for event in (init, said, result)) + "\n"


def test_a_failed_runs_report_leads_with_the_runtimes_own_error_line() -> None:
    output = _claude_not_logged_in() * 30
    error = first_error_line(output)
    assert error == "Not logged in · Please run /login"
    message = final_message(None, output, error)
    assert message.text.splitlines()[0] == "Not logged in · Please run /login"
    assert "{" not in message.text  # the JSON events are the raw stream, not the report


def test_an_error_line_leads_a_reply_and_the_plain_lines_of_stderr() -> None:
    message = final_message("I could not reach the API.", "", "Error: connect ECONNREFUSED")
    assert message.text == "Error: connect ECONNREFUSED\n\nI could not reach the API."
    same = final_message("Error: connect ECONNREFUSED", "", "Error: connect ECONNREFUSED")
    assert same.text == "Error: connect ECONNREFUSED"
    plain = final_message(None, "retrying\nError: quota exceeded\n", "Error: quota exceeded")
    assert plain.text == "Error: quota exceeded\n\nretrying\nError: quota exceeded"


@given(st.text(max_size=2000), st.text(min_size=1, max_size=300).filter(str.strip))
def test_with_an_error_line_the_message_starts_with_it(output: str, error: str) -> None:
    line = " ".join(error.split())
    first = final_message(None, output, line).text.split("\n")[0]
    assert first == redact(line).text
