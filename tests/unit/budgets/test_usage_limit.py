"""Reading a usage limit and its reset from the real CLIs' headless output
(alpd/domain/budgets/usage_limit.py); the lines are the shapes Claude Code 2.1.328 and Codex
0.169.0 printed against the scripted model server (tests/e2e/test_usage_limit_wake_runtimes.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from hypothesis import given
from hypothesis import strategies as st

from alpd.domain.budgets.usage_limit import MAX_WAIT, usage_limit

NOW = datetime(2026, 12, 2, 3, 45, 26, tzinfo=UTC)
RESET = 1796186453  # 2026-12-02T04:40:53Z


def claude_lines(resets: int | None = RESET, text: str = "") -> list[str]:
    text = text or "You've hit your 5-hour limit · resets 4:40am (UTC)"
    params = {"rate_limit_info": {"status": "rejected", "rateLimitType": "five_hour"}}
    if resets is not None:
        params["rate_limit_info"]["resetsAt"] = resets  # type: ignore[index]
    assistant = {"type": "assistant", "message": {"content": [{"type": "text", "text": text}]},
                 "error": "rate_limit", "api_error_status": 429,
                 "api_error": "usage_limit_reached", "api_error_params": params}  # fmt: skip
    result = {"type": "result", "is_error": True, "api_error": "usage_limit_reached",
              "result": text}  # fmt: skip
    return [json.dumps({"type": "system"}), json.dumps(assistant), json.dumps(result)]


def codex_lines(when: str = "4:45 AM") -> list[str]:
    said = (
        "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit "
        "https://chatgpt.com/settings/usage to purchase more credits or try again at "
        f"{when}."
    )
    return [
        json.dumps({"type": "turn.started"}),
        json.dumps({"type": "error", "message": said}),
        json.dumps({"type": "turn.failed", "error": {"message": said}}),
    ]


def test_claude_reset_is_its_resets_at() -> None:
    hit = usage_limit("claude", claude_lines(), NOW, UTC)
    assert hit is not None and "5-hour limit" in hit.message
    assert hit.resets_at == datetime.fromtimestamp(RESET, UTC)


def test_claude_without_resets_at_reads_the_text_to_the_end_of_its_minute() -> None:
    hit = usage_limit("claude", claude_lines(resets=None), NOW, UTC)
    assert hit is not None and hit.resets_at == datetime(2026, 12, 2, 4, 41, tzinfo=UTC)
    zoned = claude_lines(None, "You've hit your weekly limit · resets 5pm (Europe/Berlin)")
    hit = usage_limit("claude", zoned, NOW, UTC)
    assert hit is not None and hit.resets_at == datetime(2026, 12, 2, 16, 1, tzinfo=UTC)


def test_claude_legacy_epoch_form() -> None:
    line = {"type": "result", "is_error": True, "result": f"Claude AI usage limit reached|{RESET}"}
    hit = usage_limit("claude", [json.dumps(line)], NOW, UTC)
    assert hit is not None and hit.resets_at == datetime.fromtimestamp(RESET, UTC)


def test_an_api_keys_rate_limit_is_no_usage_limit() -> None:
    said = "API Error: Request rejected (429) · This request would exceed your rate limit."
    line = {"type": "result", "is_error": True, "api_error_status": 429, "result": said}
    assistant = {"type": "assistant", "error": "rate_limit",
                 "message": {"content": [{"type": "text", "text": said}]}}  # fmt: skip
    assert usage_limit("claude", [json.dumps(line), json.dumps(assistant)], NOW, UTC) is None
    assert usage_limit("codex", [json.dumps({"type": "error", "message": said})], NOW, UTC) is None


def test_codex_time_is_local_and_the_next_occurrence() -> None:
    hit = usage_limit("codex", codex_lines(), NOW, UTC)
    assert hit is not None and "usage limit" in hit.message
    assert hit.resets_at == datetime(2026, 12, 2, 4, 46, tzinfo=UTC)
    # a time already past today is tomorrow's
    earlier = usage_limit("codex", codex_lines("1:15 AM"), NOW, UTC)
    assert earlier is not None and earlier.resets_at == datetime(2026, 12, 3, 1, 16, tzinfo=UTC)
    berlin = usage_limit("codex", codex_lines("5:30 AM"), NOW, ZoneInfo("Europe/Berlin"))
    assert berlin is not None and berlin.resets_at == datetime(2026, 12, 2, 4, 31, tzinfo=UTC)


def test_codex_with_a_date() -> None:
    hit = usage_limit("codex", codex_lines("Dec 5, 2026 9:05 PM"), NOW, UTC)
    assert hit is not None and hit.resets_at == datetime(2026, 12, 5, 21, 6, tzinfo=UTC)
    far = usage_limit("codex", codex_lines("Jan 30, 2027 9:05 PM"), NOW, UTC)
    assert far is not None and far.resets_at is None, "over MAX_WAIT: not believed"


def test_a_normal_run_is_no_limit() -> None:
    lines = [json.dumps({"type": "result", "is_error": False, "result": "no limit here"}), "junk"]
    assert usage_limit("claude", lines, NOW, UTC) is None
    assert usage_limit("codex", [json.dumps({"type": "turn.completed"})], NOW, UTC) is None


@given(
    st.integers(min_value=0, max_value=23),
    st.integers(min_value=0, max_value=59),
    st.integers(min_value=-12, max_value=14),
    st.datetimes(datetime(2020, 1, 1), datetime(2035, 1, 1), timezones=st.just(UTC)),
)
def test_a_said_time_resets_within_a_day_and_a_minute_and_never_before_now(
    hour: int, minute: int, offset: int, now: datetime
) -> None:
    local = timezone(timedelta(hours=offset))
    said = f"{hour % 12 or 12}:{minute:02d} {'PM' if hour >= 12 else 'AM'}"
    hit = usage_limit("codex", codex_lines(said), now, local)
    assert hit is not None and hit.resets_at is not None
    assert now <= hit.resets_at <= now + timedelta(days=1, minutes=1)
    shown = (hit.resets_at - timedelta(minutes=1)).astimezone(local)
    assert hit.resets_at == now or (shown.hour, shown.minute) == (hour, minute)


@given(st.lists(st.text(max_size=200), max_size=20), st.sampled_from(["claude", "codex"]))
def test_any_output_is_read_without_error(lines: list[str], runtime: str) -> None:
    hit = usage_limit(runtime, lines, NOW, UTC)
    assert hit is None or hit.resets_at is None or NOW <= hit.resets_at <= NOW + MAX_WAIT
