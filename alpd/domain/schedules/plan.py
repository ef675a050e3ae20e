"""Schedule planning: when a schedule fires next, and what a late wake-up owes. Pure.

A schedule is one of three rules; every function here takes the clock as a parameter.

- `CronRule` — a five-field cron expression (or an `@hourly`-style macro) read on the wall
  clock of an IANA zone. croniter matches the expression against *naive* wall times (plain
  calendar arithmetic); this module turns each matching wall time into instants with
  zoneinfo, so daylight-saving changes follow two written rules instead of a library's
  accidents:
  1. *Spring forward* (a wall time that does not exist, e.g. 02:30 on the night clocks jump
     from 02:00 to 03:00): it is shifted forward by the gap (02:30 fires at 03:30), as PEP 495
     and java.time resolve such a time. A daily job still fires that day, once; an hourly
     job stays an hour apart (its 02:00 becomes the 03:00 it would fire at anyway).
  2. *Fall back* (a wall time that happens twice): it fires at its first occurrence only,
     unless the hour field matches every hour (`0 * * * *`, `*/15 * * * *`): such a job is
     about elapsed time, so it fires in both passes and an hourly job stays one hour apart.
- `EveryRule` — a fixed period of real time from an anchor (the schedule's creation): fires
  at `anchor + k·period`, k ≥ 1. Each fire time is computed from the anchor, never from the
  previous fire, so a late wake-up never pushes later fires back (no drift).
- `AtRule` — one instant; fires once.

`plan` answers "it is `now`, fires after `after` were already accounted for: what runs?":
every fire time in (after, now] is *due*; they coalesce into at most one run, the latest,
whose `missed` counts the earlier ones it stands for. With `catch_up = "none"` a run is made
only for a fire due less than `ON_TIME_GRACE` ago (the scheduler's normal lateness); older
ones are skipped and counted. Due fires are counted up to `COUNT_CAP`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import CroniterBadCronError, CroniterBadDateError, croniter

from alpd.errors import ScheduleInvalid

__all__ = [
    "COUNT_CAP",
    "MIN_PERIOD",
    "ON_TIME_GRACE",
    "SPREAD",
    "AtRule",
    "CatchUp",
    "CronRule",
    "EveryRule",
    "Fire",
    "Plan",
    "Rule",
    "count_due",
    "next_fire",
    "parse_at",
    "parse_cron",
    "parse_every",
    "parse_zone",
    "plan",
]

CatchUp = Literal["one", "none"]

#: a fire this recent is on time, whatever the catch-up rule
ON_TIME_GRACE: Final = timedelta(seconds=60)
#: due fires are counted up to this many (a week of a per-minute job; a count costs
#: ~0.1 ms per fire)
COUNT_CAP: Final = 10_000
#: more than any zone's daylight-saving shift (2 h at most, Antarctica/Troll): how far wall
#: order and real order can disagree. Transitions are assumed further apart than this.
SPREAD: Final = timedelta(hours=3)
#: the shortest `--every`; shorter would be a busy loop with extra steps
MIN_PERIOD: Final = timedelta(seconds=1)
#: the longest `--every`: ten years. Longer is no repeating job, and far enough past it the
#: calendar ends (`99999999999d` overflowed `timedelta`, answered as an internal error)
MAX_PERIOD: Final = timedelta(days=3650)
#: `--at` before this: the arithmetic around a fire (zone offsets, SPREAD) stays in the calendar
LATEST_AT: Final = datetime(9999, 1, 1, tzinfo=UTC)

_MACROS: Final = frozenset(
    {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
)
_DURATION: Final = re.compile(r"(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")


@dataclass(frozen=True, slots=True)
class CronRule:
    expression: str
    zone: ZoneInfo
    #: the hour field matches every hour: repeated wall times fire in both passes
    every_hour: bool


@dataclass(frozen=True, slots=True)
class EveryRule:
    period: timedelta
    anchor: datetime


@dataclass(frozen=True, slots=True)
class AtRule:
    at: datetime


Rule = CronRule | EveryRule | AtRule


@dataclass(frozen=True, slots=True)
class Fire:
    """One run: the fire time it is for, and how many earlier due fires it stands for."""

    fire_time: datetime
    missed: int


@dataclass(frozen=True, slots=True)
class Plan:
    run: Fire | None
    #: due fires that get no run (catch_up = "none", or the older ones under "one" are in
    #: `run.missed` instead)
    skipped: int
    next_fire: datetime | None


# parsing: every refusal says what is wrong and what would be right


def parse_zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ScheduleInvalid(
            f"unknown time zone {name!r}: use an IANA name such as Europe/Berlin or UTC",
            field="timezone",
            timezone=name,
        ) from exc


def parse_cron(expression: str, zone_name: str) -> CronRule:
    text = " ".join(expression.split())
    fields = text.split(" ")
    if not (len(fields) == 5 or (len(fields) == 1 and text in _MACROS)):
        raise ScheduleInvalid(
            f"{expression!r} is not a cron expression: give five fields "
            "(minute hour day-of-month month day-of-week) or one of " + ", ".join(sorted(_MACROS)),
            field="cron",
            expression=expression,
        )
    zone = parse_zone(zone_name)
    try:
        hours = croniter(text).expanded[1]
    except (CroniterBadCronError, ValueError) as exc:
        raise ScheduleInvalid(
            f"{expression!r} is not a cron expression: {exc}", field="cron", expression=expression
        ) from exc
    rule = CronRule(text, zone, every_hour=hours == ["*"] or len(hours) == 24)
    try:
        croniter(text, datetime(2000, 1, 1)).get_next(datetime)
    except CroniterBadDateError as exc:
        raise ScheduleInvalid(
            f"{expression!r} never matches a date (e.g. February 30)",
            field="cron",
            expression=expression,
        ) from exc
    return rule


def parse_every(text: str, anchor: datetime) -> EveryRule:
    """`90s`, `5m`, `2h`, `1d`, `1w`, or a sum such as `1h30m`."""
    match = _DURATION.fullmatch(text.strip().lower())
    if not text.strip() or match is None:
        raise ScheduleInvalid(
            f"{text!r} is not a duration: use e.g. 30s, 5m, 2h, 1d or 1h30m",
            field="every",
            every=text,
        )
    weeks, days, hours, minutes, seconds = (int(g) if g else 0 for g in match.groups())
    total = (((weeks * 7 + days) * 24 + hours) * 60 + minutes) * 60 + seconds
    if total > MAX_PERIOD.total_seconds():
        raise ScheduleInvalid(
            f"{text!r} is longer than a schedule repeats: give at most "
            f"{MAX_PERIOD.days}d (ten years), or use --at for a one-off",
            field="every",
            every=text,
        )
    period = timedelta(seconds=total)
    if period < MIN_PERIOD:
        raise ScheduleInvalid(
            f"{text!r} is shorter than {MIN_PERIOD.total_seconds():g}s", field="every", every=text
        )
    return EveryRule(period, anchor)


def parse_at(text: str, zone_name: str, now: datetime) -> AtRule:
    """An ISO 8601 time; without an offset it is read in `zone_name`. Must be in the future."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError as exc:
        raise ScheduleInvalid(
            f"{text!r} is not a time: use ISO 8601, e.g. 2026-12-01T03:00 or "
            "2026-12-01T03:00+01:00",
            field="at",
            at=text,
        ) from exc
    outside = ScheduleInvalid(
        f"{text!r} is outside the calendar alp schedules on: give a time before "
        f"{LATEST_AT.year}-01-01",
        field="at",
        at=text,
    )
    try:
        if moment.tzinfo is None:
            zone = parse_zone(zone_name)
            instants = _instants(moment, zone, both=False)
            moment = instants[0]
        moment = moment.astimezone(UTC)
    except OverflowError as exc:  # within a zone's offset of year 1 or 9999
        raise outside from exc
    if moment >= LATEST_AT:
        raise outside
    if moment <= now:
        raise ScheduleInvalid(
            f"{text!r} is in the past; a one-off schedule needs a future time", field="at", at=text
        )
    return AtRule(moment)


# next fire


def next_fire(rule: Rule, after: datetime) -> datetime | None:
    """The first fire time strictly after `after` (aware, UTC); None when there is none."""
    if isinstance(rule, EveryRule):
        elapsed = after - rule.anchor
        steps = 1 if elapsed < timedelta(0) else elapsed // rule.period + 1
        return rule.anchor + steps * rule.period
    if isinstance(rule, AtRule):
        return rule.at if rule.at > after else None
    return _next_cron(rule, after)


def _next_cron(rule: CronRule, after: datetime) -> datetime:
    zone = rule.zone
    wall = _wall(after, zone)
    candidates = croniter(rule.expression, wall)
    naive = candidates.get_next(datetime)
    first = _instants(naive, zone, both=rule.every_hour)[0]
    offsets = {_offset(moment, zone) for moment in (after, first) for moment in _around(moment)}
    if len(offsets) == 1:
        # No transition near `after` or `first`: wall order is real order there, so the first
        # wall time past `after` is the first fire.
        return first
    # Near a transition wall order and real order differ (a repeated hour's second pass, a
    # skipped time shifted past the gap): every wall time within SPREAD of the answer counts.
    candidates = croniter(rule.expression, wall - SPREAD)
    best: datetime | None = None
    while True:
        naive = candidates.get_next(datetime)
        if best is not None and naive >= _wall(best, zone) + SPREAD:
            return best
        for instant in _instants(naive, zone, both=rule.every_hour):
            if instant > after and (best is None or instant < best):
                best = instant


def _cron_between(rule: CronRule, after: datetime, until: datetime) -> set[datetime]:
    """Every fire time in (after, until], in one pass over the wall times."""
    zone = rule.zone
    candidates = croniter(rule.expression, _wall(after, zone) - SPREAD)
    end = _wall(until, zone) + SPREAD
    found: set[datetime] = set()
    while (naive := candidates.get_next(datetime)) < end:
        found.update(
            instant
            for instant in _instants(naive, zone, both=rule.every_hour)
            if after < instant <= until
        )
        if len(found) > COUNT_CAP:
            break
    return found


def _around(moment: datetime) -> tuple[datetime, datetime]:
    return moment - SPREAD, moment + SPREAD


def _wall(moment: datetime, zone: ZoneInfo) -> datetime:
    return moment.astimezone(zone).replace(tzinfo=None)


def _offset(moment: datetime, zone: ZoneInfo) -> timedelta | None:
    return moment.astimezone(zone).utcoffset()


def _instants(naive: datetime, zone: ZoneInfo, *, both: bool) -> list[datetime]:
    """The UTC instants of one wall time: one, or two for a repeated time (when `both`)."""
    early = naive.replace(tzinfo=zone, fold=0)
    late = naive.replace(tzinfo=zone, fold=1)
    offset_early, offset_late = early.utcoffset(), late.utcoffset()
    assert offset_early is not None and offset_late is not None
    if offset_early == offset_late:
        return [early.astimezone(UTC)]
    if offset_early > offset_late:
        repeated = [early.astimezone(UTC), late.astimezone(UTC)]
        return repeated if both else repeated[:1]
    # Skipped by a spring-forward: the offset from before the gap shifts it past the gap.
    return [early.astimezone(UTC)]


# what is due


def count_due(rule: Rule, after: datetime, now: datetime) -> tuple[datetime | None, int]:
    """The latest fire time in (after, now] and how many there are (up to COUNT_CAP)."""
    if isinstance(rule, EveryRule):
        first = next_fire(rule, after)
        assert first is not None
        if first > now:
            return None, 0
        count = (now - first) // rule.period + 1
        return first + (count - 1) * rule.period, min(count, COUNT_CAP)
    if isinstance(rule, AtRule):
        return (rule.at, 1) if after < rule.at <= now else (None, 0)
    found = _cron_between(rule, after, now)
    if len(found) <= COUNT_CAP:
        return max(found, default=None), len(found)
    # Counting stops at the cap; the run is still for the latest due fire.
    window = timedelta(hours=1)
    while not (recent := _cron_between(rule, max(after, now - window), now)):
        window *= 8
    return max(recent), COUNT_CAP


def plan(rule: Rule, after: datetime, now: datetime, catch_up: CatchUp) -> Plan:
    """What a scheduler awake at `now` does, fires up to `after` being accounted for."""
    latest, count = count_due(rule, after, now)
    following = next_fire(rule, max(now, after))
    if latest is None:
        return Plan(run=None, skipped=0, next_fire=following)
    if catch_up == "one":
        return Plan(run=Fire(latest, missed=count - 1), skipped=0, next_fire=following)
    if now - latest <= ON_TIME_GRACE:
        return Plan(run=Fire(latest, missed=0), skipped=count - 1, next_fire=following)
    return Plan(run=None, skipped=count, next_fire=following)


def describe(rule: Rule) -> str:
    """One line for people: `cron 0 3 * * * (Europe/Berlin)`, `every 2h`, `at …`."""
    if isinstance(rule, CronRule):
        return f"cron {rule.expression} ({rule.zone.key})"
    if isinstance(rule, EveryRule):
        return f"every {_format_period(rule.period)}"
    return f"at {rule.at.isoformat()}"


def _format_period(period: timedelta) -> str:
    seconds = int(period.total_seconds())
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if seconds >= size:
            parts.append(f"{seconds // size}{unit}")
            seconds %= size
    return "".join(parts) or "0s"
