"""Budget levels and the burn-rate forecast (alpd/domain/budgets/levels.py), as properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alpd.domain.budgets.levels import (
    Limits,
    Spend,
    burn_per_hour,
    check_limits,
    describe,
    forecast,
    level,
    worse,
)

usd = st.floats(min_value=0.01, max_value=1000, allow_nan=False)
spent = st.floats(min_value=0, max_value=2000, allow_nan=False)


@given(hard=usd, ratio=st.floats(min_value=0.01, max_value=0.99), cost=spent)
def test_the_level_follows_the_spend_against_soft_then_hard(
    hard: float, ratio: float, cost: float
) -> None:
    limits = check_limits(Limits(usd=hard, soft_usd=hard * ratio))
    reached = level(limits, Spend(cost_usd=cost))
    expected = "hard" if cost >= hard else "soft" if cost >= hard * ratio else "ok"
    assert reached == expected
    assert "USD" in describe("thread", limits, Spend(cost_usd=cost))


@given(tokens=st.integers(1, 10**9), used=st.integers(0, 2 * 10**9), cost=spent)
def test_either_unit_reaching_its_hard_limit_is_hard(tokens: int, used: int, cost: float) -> None:
    limits = Limits(usd=1000.0, tokens=tokens)
    reached = level(limits, Spend(cost_usd=cost, tokens=used))
    assert (reached == "hard") == (used >= tokens or cost >= 1000.0)


@given(a=st.sampled_from(["ok", "soft", "hard"]), b=st.sampled_from(["ok", "soft", "hard"]))
def test_worse_is_the_maximum(a: str, b: str) -> None:
    order = ["ok", "soft", "hard"]
    assert worse(a, b) == order[max(order.index(a), order.index(b))]  # type: ignore[arg-type]


@given(
    cost=st.floats(min_value=0, max_value=100),
    running=st.floats(min_value=1, max_value=86400),
    remaining=st.floats(min_value=0, max_value=86400),
)
def test_the_forecast_is_the_cost_plus_the_rate_times_the_time_left(
    cost: float, running: float, remaining: float
) -> None:
    ahead = forecast(cost, running, remaining)
    assert ahead is not None and ahead >= cost
    assert ahead == pytest.approx(cost + cost / running * remaining)
    assert burn_per_hour(cost, running) == pytest.approx(cost * 3600 / running)
    assert forecast(cost, running, None) is None
    assert forecast(None, running, remaining) is None


@pytest.mark.parametrize(
    ("limits", "says"),
    [
        (Limits(), "at least one limit"),
        (Limits(soft_usd=1.0), "needs a hard one"),
        (Limits(usd=1.0, soft_usd=1.0), "below the hard one"),
        (Limits(tokens=10, soft_tokens=20), "below the hard one"),
    ],
)
def test_bad_limits_say_what_is_wrong(limits: Limits, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        check_limits(limits)


optional_usd = st.none() | usd
optional_percent = st.none() | st.floats(min_value=1, max_value=100)


@given(
    hard_usd=optional_usd,
    tokens=st.none() | st.integers(1, 10**9),
    window=optional_percent,
    soft_usd=optional_usd,
    soft_window=optional_percent,
)
def test_a_limit_is_hard_exactly_when_some_spend_can_reach_hard(
    hard_usd: float | None,
    tokens: int | None,
    window: float | None,
    soft_usd: float | None,
    soft_window: float | None,
) -> None:
    limits = Limits(
        usd=hard_usd,
        soft_usd=soft_usd,
        tokens=tokens,
        window_percent=window,
        soft_window_percent=soft_window,
    )
    everything = Spend(cost_usd=10**6, tokens=10**12, window_percent=100.0)
    assert limits.hard == (level(limits, everything) == "hard")
