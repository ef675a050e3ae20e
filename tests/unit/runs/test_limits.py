"""The pure rules of a run's guard rails (alpd.domain.runs.limits)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alpd.domain.runs.limits import (
    RunLimits,
    effective_limits,
    limit_hit,
    parse_timeout,
)
from alpd.domain.runs.outcomes import outcome_of


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90), ("30m", 1800), ("2h", 7200), ("1h30m", 5400), ("45", 45), ("1d", 86400)],
)
def test_a_timeout_is_read_as_people_write_durations(text: str, seconds: int) -> None:
    assert parse_timeout(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "0s", "m", "-5m", "30x", "8d"])
def test_a_timeout_that_is_no_duration_or_out_of_range_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match=r"duration|time limit"):
        parse_timeout(text)


limits = st.builds(
    RunLimits,
    timeout_seconds=st.none() | st.integers(1, 10**6),
    budget_usd=st.none() | st.floats(0.01, 1000),
)


@given(agent=limits, asked=limits)
def test_what_a_request_sets_replaces_the_agents_and_nothing_else(
    agent: RunLimits, asked: RunLimits
) -> None:
    got = effective_limits(agent, asked)
    assert got.timeout_seconds == (
        asked.timeout_seconds if asked.timeout_seconds is not None else agent.timeout_seconds
    )
    budget = asked.budget_usd if asked.budget_usd is not None else agent.budget_usd
    assert got.budget_usd == budget


@given(limits, st.floats(0, 10**7), st.none() | st.floats(0, 10**4))
def test_a_limit_is_hit_exactly_when_its_value_is_reached(
    run: RunLimits, seconds: float, cost: float | None
) -> None:
    hit = limit_hit(run, running_seconds=seconds, cost_usd=cost)
    over_time = run.timeout_seconds is not None and seconds >= run.timeout_seconds
    over_cost = run.budget_usd is not None and cost is not None and cost >= run.budget_usd
    assert hit == ("timed-out" if over_time else "budget-exceeded" if over_cost else None)


@given(st.none() | st.integers(-(2**31), 2**31 - 1))
def test_what_alpd_ended_a_run_for_is_its_outcome_whatever_its_exit(code: int | None) -> None:
    for reason in ("cancelled", "timed-out", "budget-exceeded"):
        assert outcome_of(code, ended_as=reason) == reason  # type: ignore[arg-type]
