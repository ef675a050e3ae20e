"""The pure rules of hosts and leases (alpd.domain.hosts.lease): a lease's arithmetic, who
may take a host over, and who may settle or reconcile a root (docs/many-machines.md)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alpd.domain.config_fields import ConfigError
from alpd.domain.hosts.lease import (
    HostSettings,
    HostState,
    is_lost,
    lease_until,
    may_take_over,
    renew_every,
    right_over,
)
from alpd.domain.runs.agents import parse_agents_config

T0 = datetime(2026, 1, 1, tzinfo=UTC)
seconds = st.integers(min_value=1, max_value=3600)
offsets = st.floats(min_value=-7200, max_value=7200, allow_nan=False)
ids = st.sampled_from(["host_a", "host_b", "host_c"])


def at(offset: float) -> datetime:
    return T0 + timedelta(seconds=offset)


@st.composite
def host_states(draw: st.DrawFn, host_id: str | None = None) -> HostState:
    lost = draw(st.none() | offsets.map(at))
    back = draw(st.none() | offsets.map(at)) if lost is not None else None
    return HostState(
        id=host_id or draw(ids),
        name="n",
        lease_until=at(draw(offsets)),
        lost_at=lost,
        lost_to=draw(ids) if lost is not None else None,
        back_at=back,
    )


@given(seconds, offsets)
def test_a_lease_renewed_now_lives_its_length_and_is_renewed_thrice_in_it(
    length: int, offset: float
) -> None:
    now = at(offset)
    until = lease_until(now, length)
    assert until - now == timedelta(seconds=length)
    assert 0 < renew_every(length) * 3 <= length
    host = HostState(id="host_a", name="a", lease_until=until)
    assert not may_take_over("host_b", host, now)
    assert not may_take_over("host_b", host, until - timedelta(microseconds=1))
    assert may_take_over("host_b", host, until)


@given(host_states(), ids, offsets)
def test_nobody_takes_over_itself_a_live_lease_or_a_host_already_lost(
    host: HostState, me: str, offset: float
) -> None:
    now = at(offset)
    if may_take_over(me, host, now):
        assert me != host.id and now >= host.lease_until and not is_lost(host)
    if is_lost(host) or me == host.id:
        assert not may_take_over(me, host, now)


@given(ids, st.none() | ids, offsets, st.none() | host_states(), st.none() | host_states())
def test_who_may_settle_a_root(
    me: str,
    runs_on: str | None,
    created: float,
    owner: HostState | None,
    taker: HostState | None,
) -> None:
    right = right_over(me, runs_on, at(created), owner, taker)
    taken = owner is not None and owner.lost_at is not None and at(created) <= owner.lost_at
    if runs_on is None:
        assert right == "own"  # from before hosts: as it was
    elif runs_on == me:
        # a host settles its own roots, except those taken from it while the taker lives
        assert right in ("own", "forfeited", "orphan")
        assert (right == "own") == (owner is None or not taken)
        if right == "forfeited":
            assert taker is not None and not is_lost(taker)
    else:
        # another's root: never while its host's lease holds it, always once taken
        assert right in ("elsewhere", "orphan")
        assert (right == "orphan") == (owner is None or taken)


def test_a_root_begun_after_its_host_was_taken_over_stays_the_hosts() -> None:
    lost = HostState(
        id="host_a",
        name="a",
        lease_until=at(10),
        lost_at=at(0),
        lost_to="host_b",
        back_at=at(5),
    )
    taker = HostState(id="host_b", name="b", lease_until=at(60))
    assert right_over("host_a", "host_a", at(-1), lost, taker) == "forfeited"
    assert right_over("host_b", "host_a", at(-1), lost, taker) == "orphan"
    assert right_over("host_a", "host_a", at(6), lost, taker) == "own"
    assert right_over("host_b", "host_a", at(6), lost, taker) == "elsewhere"
    # the taker itself lost: nobody else is left, the host settles what was taken from it
    gone = HostState(id="host_b", name="b", lease_until=at(1), lost_at=at(2), lost_to="host_a")
    assert right_over("host_a", "host_a", at(-1), lost, gone) == "orphan"


def test_the_host_table_of_config_toml() -> None:
    parsed = parse_agents_config('[host]\nname = "build box"\nlease = "90s"\n', source="c")
    assert parsed.host == HostSettings(name="build box", lease_seconds=90)
    assert parse_agents_config("", source="c").host == HostSettings()
    for bad, key in (
        ('[host]\nlease = "0s"\n', "lease"),
        ('[host]\nlease = "2h"\n', "lease"),
        ("[host]\nlease = true\n", "lease"),
        ('[host]\nname = ""\n', "name"),
        ("[host]\nport = 1\n", "port"),
    ):
        with pytest.raises(ConfigError) as refused:
            parse_agents_config(bad, source="c")
        assert key in str(refused.value) and refused.value.line == 2, bad
