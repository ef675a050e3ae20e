"""The handoff guards' defaults, as a home without `[handoff]` gets them: a quiet chain ends
after 600 s, a pair of threads gets 6 sends per 600 s window, a chain 3 hops."""

from __future__ import annotations

import pytest

from alpd.domain.conversation.guards import ChainLink, GuardLimits, Slot, admit
from alpd.domain.runs.agents import default_config, parse_agents_config
from alpd.errors import HandoffRateLimited

NOW = 100_000.0


def _defaults() -> list[GuardLimits]:
    return [
        default_config().handoff,
        parse_agents_config("", source="config.toml").handoff,
        parse_agents_config("[handoff]\n", source="config.toml").handoff,
    ]


@pytest.mark.parametrize("limits", _defaults())
def test_the_default_limits_are_quiet_600_s_pair_quota_6(limits: GuardLimits) -> None:
    assert (limits.chain_quiet_seconds, limits.pair_quota, limits.pair_window_seconds) == (
        600.0,
        6,
        600.0,
    )
    assert limits.hop_bound == 3


@pytest.mark.parametrize("limits", _defaults())
def test_by_default_a_pair_takes_6_sends_and_the_7th_is_rate_limited(limits: GuardLimits) -> None:
    slots: list[Slot] = []
    for n in range(6):
        admit(limits, now=NOW, holder="h", slots=slots, link=None, new_chain_id=f"c{n}")
        slots.append(Slot(f"s{n}", NOW - 599 + n, "committed", "h"))
    with pytest.raises(HandoffRateLimited) as refused:
        admit(limits, now=NOW, holder="h", slots=slots, link=None, new_chain_id="c7")
    assert refused.value.data["quota"] == 6
    # the oldest slot leaves the 600 s window one second later
    assert refused.value.data["retryAfterSeconds"] == 1.0


@pytest.mark.parametrize("limits", _defaults())
def test_by_default_a_chain_quiet_for_600_s_is_over(limits: GuardLimits) -> None:
    link = ChainLink("chain", 1, NOW - 599.9)
    going = admit(limits, now=NOW, holder="h", slots=[], link=link, new_chain_id="new")
    assert (going.chain_id, going.hop, going.new_chain) == ("chain", 2, False)
    quiet = ChainLink("chain", 1, NOW - 600.0)
    over = admit(limits, now=NOW, holder="h", slots=[], link=quiet, new_chain_id="new")
    assert (over.chain_id, over.hop, over.new_chain) == ("new", 1, True)
