"""Schedule planning against a fake clock: DST in several zones, leap days, `--every`
drift, and missed fires coalesced after a downtime.

The cron properties are checked against an oracle written independently of croniter: it
walks real time minute by minute, reads the zone's wall clock, and applies the two DST
rules of `alpd.domain.schedules.plan` to plain sets of minutes and hours.
"""

from __future__ import annotations

import calendar
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alpd.domain.schedules.plan import (
    COUNT_CAP,
    ON_TIME_GRACE,
    AtRule,
    CronRule,
    EveryRule,
    Rule,
    count_due,
    describe,
    next_fire,
    parse_at,
    parse_cron,
    parse_every,
    parse_zone,
    plan,
)
from alpd.errors import ScheduleInvalid

#: zones with daylight saving on different rules: northern and southern hemisphere, a
#: 30-minute shift (Lord Howe) and transitions at midnight (Santiago)
DST_ZONES = (
    "America/New_York",
    "Europe/Berlin",
    "Australia/Sydney",
    "Australia/Lord_Howe",
    "America/Santiago",
)
WHOLE_HOUR_ZONES = ("America/New_York", "Europe/Berlin", "Australia/Sydney")
MINUTE = timedelta(minutes=1)


def transitions(zone: ZoneInfo, year: int) -> list[tuple[datetime, timedelta]]:
    """(instant, offset change) of each DST transition of `zone` in `year`."""
    found = []
    moment = datetime(year, 1, 1, tzinfo=UTC)
    previous = moment.astimezone(zone).utcoffset()
    while moment.year == year:
        step = moment + timedelta(minutes=30)
        offset = step.astimezone(zone).utcoffset()
        if offset != previous:
            assert offset is not None and previous is not None
            found.append((step, offset - previous))
        previous, moment = offset, step
    return found


@st.composite
def near_transition(draw: st.DrawFn, zones: tuple[str, ...] = DST_ZONES) -> tuple[str, datetime]:
    """A zone and an instant within a day and a half of one of its DST transitions."""
    name = draw(st.sampled_from(zones))
    year = draw(st.integers(2024, 2030))
    instant, _ = draw(st.sampled_from(transitions(ZoneInfo(name), year)))
    seconds = draw(st.integers(-36 * 3600, 36 * 3600))
    return name, instant + timedelta(seconds=seconds)


@st.composite
def field_values(draw: st.DrawFn, size: int) -> tuple[str, frozenset[int]]:
    """A cron field (`7`, `*/15`, `1,4,22`, `*`) and the values it matches."""
    shape = draw(st.sampled_from(["one", "step", "list", "star"]))
    if shape == "one":
        value = draw(st.integers(0, size - 1))
        return str(value), frozenset({value})
    if shape == "step":
        step = draw(st.integers(2, size // 2))
        return f"*/{step}", frozenset(range(0, size, step))
    if shape == "list":
        values = draw(st.sets(st.integers(0, size - 1), min_size=2, max_size=4))
        return ",".join(str(v) for v in sorted(values)), frozenset(values)
    return "*", frozenset(range(size))


@st.composite
def daily_expressions(draw: st.DrawFn) -> tuple[str, frozenset[int], frozenset[int]]:
    minute, minutes = draw(field_values(60))
    hour, hours = draw(field_values(24))
    return f"{minute} {hour} * * *", minutes, hours


def oracle(
    zone: ZoneInfo, minutes: frozenset[int], hours: frozenset[int], after: datetime
) -> datetime:
    """The first fire after `after`, found by walking real time minute by minute."""
    every_hour = len(hours) == 24
    moment = after.replace(second=0, microsecond=0)
    while True:
        moment += MINUTE
        wall = moment.astimezone(zone).replace(tzinfo=None)
        # Read with the offset of two hours earlier, `moment` may name a wall time that a
        # spring-forward skipped: such a time fires shifted forward by the gap, i.e. now.
        earlier_offset = (moment - timedelta(hours=2)).astimezone(zone).utcoffset()
        assert earlier_offset is not None
        shifted = (moment + earlier_offset).replace(tzinfo=None)
        exists = (
            shifted.replace(tzinfo=zone).astimezone(UTC).astimezone(zone).replace(tzinfo=None)
            == shifted
        )
        if not exists and shifted.minute in minutes and shifted.hour in hours:
            return moment
        if wall.minute in minutes and wall.hour in hours:
            first = wall.replace(tzinfo=zone, fold=0).astimezone(UTC)
            if first == moment or every_hour:
                return moment


@settings(max_examples=120, deadline=None)
@given(near_transition(), daily_expressions())
def test_next_cron_fire_matches_a_minute_by_minute_oracle_around_dst(
    place: tuple[str, datetime], expression: tuple[str, frozenset[int], frozenset[int]]
) -> None:
    name, after = place
    text, minutes, hours = expression
    rule = parse_cron(text, name)
    assert next_fire(rule, after) == oracle(ZoneInfo(name), minutes, hours, after)


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(DST_ZONES),
    st.integers(2024, 2030),
    st.integers(0, 23),
    st.integers(0, 59),
    st.data(),
)
def test_a_daily_job_fires_exactly_once_on_each_local_day_across_both_transitions(
    name: str, year: int, hour: int, minute: int, data: st.DataObject
) -> None:
    zone = ZoneInfo(name)
    rule = parse_cron(f"{minute} {hour} * * *", name)
    for instant, _ in transitions(zone, year):
        start = instant - timedelta(days=3)
        fires = []
        moment = start
        while moment < instant + timedelta(days=3):
            moment = next_fire(rule, moment)  # type: ignore[assignment]
            fires.append(moment)
        days = [f.astimezone(zone).date() for f in fires[:-1]]
        assert len(days) == len(set(days)), f"a local day fired twice: {fires}"
        first, last = days[0], days[-1]
        assert len(days) == (last - first).days + 1, f"a local day was skipped: {fires}"


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(WHOLE_HOUR_ZONES), st.integers(2024, 2030), st.integers(0, 59))
def test_an_hourly_job_stays_one_real_hour_apart_across_dst(
    name: str, year: int, minute: int
) -> None:
    rule = parse_cron(f"{minute} * * * *", name)
    for instant, _ in transitions(ZoneInfo(name), year):
        moment = next_fire(rule, instant - timedelta(hours=6))
        assert moment is not None
        for _ in range(12):
            following = next_fire(rule, moment)
            assert following == moment + timedelta(hours=1)
            moment = following


def test_a_time_skipped_by_spring_forward_fires_shifted_by_the_gap() -> None:
    rule = parse_cron("30 2 * * *", "Europe/Berlin")
    # 2026-03-29 02:30 CET does not exist: clocks go from 02:00 to 03:00 (01:00Z)
    fire = next_fire(rule, datetime(2026, 3, 28, 12, 0, tzinfo=UTC))
    assert fire == datetime(2026, 3, 29, 1, 30, tzinfo=UTC)  # 03:30 CEST
    assert next_fire(rule, fire) == datetime(2026, 3, 30, 0, 30, tzinfo=UTC)  # 02:30 CEST


def test_a_fixed_time_in_the_repeated_hour_fires_at_its_first_occurrence_only() -> None:
    rule = parse_cron("30 1 * * *", "America/New_York")
    fire = next_fire(rule, datetime(2026, 11, 1, 4, 0, tzinfo=UTC))
    assert fire == datetime(2026, 11, 1, 5, 30, tzinfo=UTC)  # 01:30 EDT
    following = next_fire(rule, fire)
    assert following == datetime(2026, 11, 2, 6, 30, tzinfo=UTC)  # next day, 01:30 EST


# leap days


@settings(max_examples=200, deadline=None)
@given(
    st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2090, 1, 1)),
    st.sampled_from(("UTC", *DST_ZONES)),
)
def test_a_leap_day_job_fires_on_the_next_february_29th_and_nowhere_else(
    start: datetime, name: str
) -> None:
    rule = parse_cron("0 12 29 2 *", name)
    after = start.replace(tzinfo=UTC)
    fire = next_fire(rule, after)
    assert fire is not None
    local = fire.astimezone(ZoneInfo(name))
    assert (local.month, local.day, local.hour, local.minute) == (2, 29, 12, 0)
    assert calendar.isleap(local.year)
    candidates = [
        datetime(y, 2, 29, 12, tzinfo=ZoneInfo(name))
        for y in range(after.year, local.year)
        if calendar.isleap(y)
    ]
    assert all(c <= after for c in candidates), "an earlier February 29th was skipped"


@settings(max_examples=50, deadline=None)
@given(
    st.integers(0, 6), st.datetimes(min_value=datetime(2023, 1, 1), max_value=datetime(2030, 1, 1))
)
def test_every_day_crosses_a_leap_day_at_exactly_24_hours(days: int, start: datetime) -> None:
    anchor = start.replace(tzinfo=UTC)
    rule = parse_every("1d", anchor)
    moment = anchor + timedelta(days=days)
    for _ in range(400):
        following = next_fire(rule, moment)
        assert following is not None
        assert following - moment <= timedelta(days=1)
        assert (following - anchor) % timedelta(days=1) == timedelta(0)
        moment = following


# --every: no drift


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 7200),
    st.datetimes(min_value=datetime(2024, 1, 1), max_value=datetime(2030, 1, 1)),
    st.lists(st.floats(min_value=0, max_value=0.99), min_size=1, max_size=60),
)
def test_every_does_not_drift_however_late_each_wake_up_is(
    seconds: int, start: datetime, lateness: list[float]
) -> None:
    """A scheduler that wakes up late (by up to 99% of a period) each time still fires on
    the anchor's grid: the n-th fire is at anchor + n·period exactly."""
    anchor = start.replace(tzinfo=UTC)
    rule = parse_every(f"{seconds}s", anchor)
    period = timedelta(seconds=seconds)
    accounted = anchor
    for n, late in enumerate(lateness, start=1):
        due = next_fire(rule, accounted)
        assert due == anchor + n * period
        woke = due + period * late
        result = plan(rule, accounted, woke, "one")
        assert result.run is not None
        assert result.run.fire_time == due
        assert result.run.missed == 0
        assert result.next_fire == anchor + (n + 1) * period
        accounted = result.run.fire_time


# missed fires while alpd was down


def brute_count(rule: Rule, after: datetime, now: datetime) -> tuple[datetime | None, int]:
    latest, count, moment = None, 0, after
    while True:
        following = next_fire(rule, moment)
        if following is None or following > now:
            return latest, count
        latest, count, moment = following, count + 1, following


@st.composite
def rules(draw: st.DrawFn, anchor: datetime) -> Rule:
    if draw(st.booleans()):
        return parse_every(f"{draw(st.integers(60, 86400))}s", anchor)
    text, _, _ = draw(daily_expressions())
    if text.startswith("* ") or text.startswith("*/2 "):
        text = "0" + text[text.index(" ") :]  # keep a 3-day walk of the oracle short
    return parse_cron(text, draw(st.sampled_from(("UTC", *DST_ZONES))))


@settings(max_examples=50, deadline=None)
@given(near_transition(), st.integers(0, 3600), st.data())
def test_three_days_of_missed_fires_coalesce_into_one_run_with_their_count(
    place: tuple[str, datetime], extra: int, data: st.DataObject
) -> None:
    _, last_fire = place
    rule = data.draw(rules(last_fire - timedelta(days=1)))
    # Three days and an hour: a day that ends daylight saving time is 25 hours long.
    now = last_fire + timedelta(days=3, hours=1, seconds=extra)
    latest, count = brute_count(rule, last_fire, now)
    assert count >= 3  # every rule here fires at least daily

    one = plan(rule, last_fire, now, "one")
    assert one.run is not None
    assert one.run.fire_time == latest
    assert one.run.missed == count - 1
    assert one.skipped == 0
    assert one.next_fire is not None and one.next_fire > now

    none = plan(rule, last_fire, now, "none")
    assert none.next_fire == one.next_fire
    assert latest is not None
    if now - latest <= ON_TIME_GRACE:
        assert none.run is not None and none.run.missed == 0 and none.skipped == count - 1
    else:
        assert none.run is None and none.skipped == count


def test_nothing_due_plans_no_run_and_the_next_fire() -> None:
    anchor = datetime(2026, 1, 1, tzinfo=UTC)
    rule = parse_every("1h", anchor)
    result = plan(rule, anchor, anchor + timedelta(minutes=30), "one")
    assert result.run is None and result.skipped == 0
    assert result.next_fire == anchor + timedelta(hours=1)


def test_counting_stops_at_the_cap_but_the_run_is_for_the_latest_fire() -> None:
    anchor = datetime(2026, 1, 1, tzinfo=UTC)
    rule = parse_cron("* * * * *", "UTC")
    now = anchor + timedelta(days=8, seconds=30)
    latest, count = count_due(rule, anchor, now)
    assert count == COUNT_CAP
    assert latest == anchor + timedelta(days=8)


def test_a_one_off_fires_once() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    rule = parse_at("2026-01-02T03:00", "Europe/Berlin", now)
    assert rule == AtRule(datetime(2026, 1, 2, 2, 0, tzinfo=UTC))
    assert next_fire(rule, now) == rule.at
    assert next_fire(rule, rule.at) is None
    late = plan(rule, now, rule.at + timedelta(days=3), "one")
    assert late.run is not None and late.run.missed == 0 and late.next_fire is None


# refusals name what is wrong


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: parse_cron("61 * * * *", "UTC"), "cron"),
        (lambda: parse_cron("* * * *", "UTC"), "cron"),
        (lambda: parse_cron("0 0 0 * * *", "UTC"), "cron"),
        (lambda: parse_cron("@reboot", "UTC"), "cron"),
        (lambda: parse_cron("0 0 30 2 *", "UTC"), "cron"),
        (lambda: parse_cron("0 3 * * *", "Mars/Olympus_Mons"), "timezone"),
        (lambda: parse_cron("0 3 * * *", "../../etc/passwd"), "timezone"),
        (lambda: parse_zone(""), "timezone"),
        (lambda: parse_every("0s", datetime(2026, 1, 1, tzinfo=UTC)), "every"),
        (lambda: parse_every("soon", datetime(2026, 1, 1, tzinfo=UTC)), "every"),
        (lambda: parse_every("", datetime(2026, 1, 1, tzinfo=UTC)), "every"),
        (lambda: parse_at("tomorrow", "UTC", datetime(2026, 1, 1, tzinfo=UTC)), "at"),
        (lambda: parse_at("2025-01-01T00:00Z", "UTC", datetime(2026, 1, 1, tzinfo=UTC)), "at"),
    ],
)
def test_a_bad_schedule_is_refused_with_the_field_and_the_reason(make: object, field: str) -> None:
    with pytest.raises(ScheduleInvalid) as caught:
        make()  # type: ignore[operator]
    assert caught.value.data["field"] == field
    assert caught.value.message


def test_rules_describe_themselves() -> None:
    anchor = datetime(2026, 1, 1, tzinfo=UTC)
    assert describe(parse_cron("0  3 * * *", "Europe/Berlin")) == "cron 0 3 * * * (Europe/Berlin)"
    assert describe(parse_every("1h30m", anchor)) == "every 1h30m"
    assert describe(EveryRule(timedelta(days=2), anchor)) == "every 2d"
    assert isinstance(parse_cron("@hourly", "UTC"), CronRule)
