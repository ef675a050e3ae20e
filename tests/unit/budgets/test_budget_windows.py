"""A budget as a share of the subscription window (alpd/domain/budgets/windows.py, levels.py;
docs/budgets.md): the fullest window not reset yet counts, a window not reported never
reaches a limit, and Codex's rollout `rate_limits` are read as the real CLI writes them."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alpd.domain.budgets.levels import Limits, Spend, check_limits, describe, level
from alpd.domain.budgets.windows import RateWindow, fullest
from alpd.domain.history.transcripts.codex import read_codex

share = st.floats(min_value=1, max_value=100, allow_nan=False)
used = st.floats(min_value=0, max_value=100, allow_nan=False)


@given(hard=share, ratio=st.floats(min_value=0.01, max_value=0.99), now=used)
def test_the_window_level_follows_how_full_the_window_is(
    hard: float, ratio: float, now: float
) -> None:
    limits = check_limits(Limits(window_percent=hard, soft_window_percent=hard * ratio))
    reached = level(limits, Spend(window_percent=now))
    expected = "hard" if now >= hard else "soft" if now >= hard * ratio else "ok"
    assert reached == expected
    assert "subscription window" in describe("thread", limits, Spend(window_percent=now))


@given(hard=share, cost=st.floats(min_value=0, max_value=10, allow_nan=False))
def test_a_window_not_reported_never_reaches_a_window_limit(hard: float, cost: float) -> None:
    limits = Limits(window_percent=hard, soft_window_percent=hard / 2)
    assert level(limits, Spend(cost_usd=cost, tokens=10**9, window_percent=None)) == "ok"
    assert "not reported" in describe("thread", limits, Spend())


@given(primary=used, secondary=used, now=st.integers(0, 2000))
def test_the_fullest_window_not_reset_counts(primary: float, secondary: float, now: int) -> None:
    windows = [
        RateWindow(name="primary", used_percent=primary, window_minutes=300, resets_at=1000),
        RateWindow(name="secondary", used_percent=secondary, resets_at=1500),
    ]
    current = [w.used_percent for w in windows if w.resets_at is not None and w.resets_at > now]
    assert fullest(windows, now) == (max(current) if current else None)


@pytest.mark.parametrize("bad", [0.0, -5.0, 100.5])
def test_a_window_share_is_a_percent(bad: float) -> None:
    with pytest.raises(ValueError, match="percent"):
        check_limits(Limits(window_percent=bad))
    with pytest.raises(ValueError, match="below the hard one"):
        check_limits(Limits(window_percent=50, soft_window_percent=60))


def _token_count(primary: object, secondary: object = None) -> bytes:
    """A `token_count` line as Codex 0.169.0 writes it (seen with the real CLI against the
    scripted model server sending `x-codex-primary-*` headers)."""
    rate_limits = {"limit_id": "codex", "limit_name": None, "primary": primary,
                   "secondary": secondary, "credits": None, "individual_limit": None,
                   "spend_control_reached": None, "plan_type": None,
                   "rate_limit_reached_type": None}  # fmt: skip
    payload = {"type": "token_count", "info": None, "rate_limits": rate_limits}
    line = {"timestamp": "2026-12-02T06:00:00.000Z", "type": "event_msg", "payload": payload}
    return (json.dumps(line) + "\n").encode()


def test_codex_rate_limits_become_the_reads_windows_the_last_one_winning() -> None:
    first = {"used_percent": 10.0, "window_minutes": 300, "resets_at": 1796195994}
    later = {"used_percent": 15.0, "window_minutes": 300, "resets_at": 1796195994}
    weekly = {"used_percent": 40.0, "window_minutes": 10080, "resets_at": 1796700000}
    result = read_codex(_token_count(first) + _token_count(later, weekly), session_id="s")
    assert result.rate_windows == (
        RateWindow(name="primary", used_percent=15.0, window_minutes=300, resets_at=1796195994),
        RateWindow(name="secondary", used_percent=40.0, window_minutes=10080,
                   resets_at=1796700000),
    )  # fmt: skip
    assert result.skipped == 0


def test_an_api_keys_null_rate_limits_report_no_window() -> None:
    """With an API key (the tests' fixtures, recorded from the real CLI) both are null."""
    assert read_codex(_token_count(None), session_id="s").rate_windows is None
    # a later null report keeps the window read before it
    found = read_codex(
        _token_count({"used_percent": 5.0, "window_minutes": 300}) + _token_count(None),
        session_id="s",
    )
    assert found.rate_windows == (RateWindow(name="primary", used_percent=5.0, window_minutes=300),)
