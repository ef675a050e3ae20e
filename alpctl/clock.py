"""The one way alp shows a person a moment: local time with its zone, `2026-12-02 09:41 CET`.

Every time the command line prints goes through `local_time` (a conversation's lines drop the
date of today: `09:41 CET`); the web page's `local_time` filter and the editors' formatters
print the same shape. Times on the wire stay ISO 8601 in UTC (`--json` shows them as sent).
Stdlib `time` only (no datetime): `alp thread list` imports this module.
"""

from __future__ import annotations

import time


def epoch_of(iso: str) -> float | None:
    """Seconds since the epoch of `YYYY-MM-DDTHH:MM[:SS[.fff]](Z|±HH:MM)`, else None."""
    try:
        date, _, clock = iso.partition("T")
        year, month, day = (int(part) for part in date.split("-"))
        offset = 0
        if clock.endswith("Z"):
            clock = clock[:-1]
        elif len(clock) > 6 and clock[-6] in "+-" and clock[-3] == ":":
            sign = 1 if clock[-6] == "+" else -1
            offset = sign * (int(clock[-5:-3]) * 3600 + int(clock[-2:]) * 60)
            clock = clock[:-6]
        parts = clock.split(":")
        hours, minutes = int(parts[0]), int(parts[1])
        whole, _, fraction = (parts[2] if len(parts) > 2 else "0").partition(".")
        if not fraction.isdigit() and fraction:
            return None
        micros = int(whole) * 1_000_000 + int((fraction + "000000")[:6])
    except (ValueError, IndexError):
        return None
    days = _days_from_civil(year, month, day)
    # Whole microseconds, divided once at the end: the same arithmetic as
    # datetime.timestamp(), so the two agree to the last bit.
    seconds = days * 86400 + hours * 3600 + minutes * 60 - offset
    return (seconds * 1_000_000 + micros) / 1_000_000


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm)."""
    year -= month <= 2
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146097 + day_of_era - 719468


def local_time(iso: str | None, *, today_short: bool = False) -> str:
    """`2026-12-02 09:41 CET` in this machine's zone; `-` for none; what is not a time, as it
    is. `today_short`: a moment of today as `09:41 CET` (a conversation's lines)."""
    if not iso:
        return "-"
    epoch = epoch_of(iso)
    if epoch is None:
        return iso
    moment = time.localtime(epoch)
    zone = time.strftime("%Z", moment) or time.strftime("%z", moment)
    if today_short and moment[:3] == time.localtime()[:3]:
        return time.strftime("%H:%M ", moment) + zone
    return time.strftime("%Y-%m-%d %H:%M ", moment) + zone
