"""A run that ended on its runtime's usage limit, and when that limit resets.

What the real CLIs print on their headless output (docs/budgets.md, "Resume after a usage
limit"):

- **Claude Code** (`-p --output-format stream-json`): the synthetic assistant message and the
  `result` line carry `"api_error": "usage_limit_reached"`; the assistant message also has
  `api_error_params.rate_limit_info.resetsAt` (epoch seconds) and `rateLimitType`
  (`five_hour`, `seven_day` …). The text is "You've hit your 5-hour limit · resets 4:40am
  (UTC)"; older versions printed "Claude AI usage limit reached|<epoch seconds>".
- **Codex CLI** (`exec --json`): `{"type": "turn.failed", "error": {"message": "You’ve hit
  your usage limit. … try again at 4:45 AM."}}` (an `error` line says the same), the time in
  the local zone, with the date ("Dec 3, 2026 4:45 AM") when it is not today.

An API key's ordinary rate limit (HTTP 429 "rate_limit_error" without a usage limit) is not
one: the runtime retries those itself. Pure: the lines, the time now and the local zone are
parameters.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

#: How many times in a row a thread is woken after a usage limit before alp stops trying
#: (each wake that hits the limit again schedules the next, up to this many).
MAX_WAKES = 3
#: A reset further out than this is not believed (a misread date): no wake.
MAX_WAIT = timedelta(days=8)

_MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTHS = {name: number for number, name in enumerate(_MONTH_NAMES, 1)}
# "[Dec 3[, 2026][,] ]4:45 AM" / "4:40am" / "4pm"
_WHEN = re.compile(
    r"(?:(?P<month>[A-Za-z]{3})[a-z]* (?P<day>\d{1,2})(?:st|nd|rd|th)?(?:, (?P<year>\d{4}))?,? )?"
    r"(?:at )?(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*(?P<ampm>[ap]m)\b",
    re.IGNORECASE,
)
_ZONE = re.compile(r"\(([A-Za-z_]+(?:/[A-Za-z_+\-0-9]+)*)\)")
_LEGACY = re.compile(r"usage limit reached\|(\d{9,11})", re.IGNORECASE)
_HIT = re.compile(r"hit your (?:[\w-]+ )*limit|usage limit reached", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class UsageLimit:
    """The limit a run hit: the runtime's own words and when it resets (None: not said)."""

    message: str
    resets_at: datetime | None


def usage_limit(
    runtime: str, lines: Iterable[str], now: datetime, local: tzinfo
) -> UsageLimit | None:
    """The usage limit the run's headless output (its JSON lines) reports, if any: the first
    report that says when it resets (Claude's assistant line, with the exact `resetsAt`,
    comes before its `result` line, which says it to the minute)."""
    found: UsageLimit | None = None
    for line in lines:
        if "limit" not in line:
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        hit = _claude(event, now) if runtime == "claude" else _codex(event, now, local)
        if hit is not None and (found is None or found.resets_at is None):
            found = hit
    return found


def _claude(event: dict[str, Any], now: datetime) -> UsageLimit | None:
    text = _claude_text(event)
    said = event.get("error") == "rate_limit" and _HIT.search(text)
    if event.get("api_error") != "usage_limit_reached" and not (_LEGACY.search(text) or said):
        return None
    info = (event.get("api_error_params") or {}).get("rate_limit_info") or {}
    resets = info.get("resetsAt") if isinstance(info, dict) else None
    if isinstance(resets, int | float) and resets > 0:
        return UsageLimit(text, _bounded(datetime.fromtimestamp(resets, UTC), now))
    legacy = _LEGACY.search(text)
    if legacy:
        return UsageLimit(text, _bounded(datetime.fromtimestamp(int(legacy[1]), UTC), now))
    _, _, after = text.partition("resets ")
    zone = _zone(after, UTC)
    return UsageLimit(text, _clock_time(after, now, zone) if after else None)


def _claude_text(event: dict[str, Any]) -> str:
    if isinstance(event.get("result"), str):
        return str(event["result"])
    content = (event.get("message") or {}).get("content")
    if isinstance(content, list):
        return " ".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def _codex(event: dict[str, Any], now: datetime, local: tzinfo) -> UsageLimit | None:
    if event.get("type") == "turn.failed":
        message = (event.get("error") or {}).get("message")
    elif event.get("type") == "error":
        message = event.get("message")
    else:
        return None
    if not isinstance(message, str) or not _HIT.search(message):
        return None
    _, _, after = message.partition("try again at ")
    return UsageLimit(message, _clock_time(after, now, local) if after else None)


def _zone(text: str, default: tzinfo) -> tzinfo:
    named = _ZONE.search(text)
    if named:
        try:
            return ZoneInfo(named[1])
        except (ZoneInfoNotFoundError, ValueError):
            pass
    return default


def _clock_time(text: str, now: datetime, zone: tzinfo) -> datetime | None:
    """The end of the minute "4:45 AM" / "Dec 3, 2026 4:45 AM" / "4pm" names, in `zone`: a
    time alone is its next occurrence from now."""
    when = _WHEN.search(text)
    if when is None:
        return None
    hour = int(when["hour"]) % 12 + (12 if when["ampm"].lower() == "pm" else 0)
    minute = int(when["minute"] or 0)
    if hour > 23 or minute > 59:
        return None
    here = now.astimezone(zone)
    try:
        if when["month"]:
            month = _MONTHS.get(when["month"][:3].lower())
            if month is None:
                return None
            year = int(when["year"]) if when["year"] else here.year
            moment = datetime(year, month, int(when["day"]), hour, minute, tzinfo=zone)
            if not when["year"] and moment < here - timedelta(days=1):
                moment = moment.replace(year=year + 1)  # "Jan 2" said on Dec 31
        else:
            moment = here.replace(hour=hour, minute=minute, second=0, microsecond=0)
            if moment < here - timedelta(minutes=1):
                moment += timedelta(days=1)
    except ValueError:
        return None
    # Said to the minute: the reset is within that minute, so the end of it (not a wake that
    # meets the limit again a few seconds early).
    return _bounded(moment.astimezone(UTC) + timedelta(minutes=1), now)


def _bounded(moment: datetime, now: datetime) -> datetime | None:
    """The reset, not before now; None past `MAX_WAIT` (not believed)."""
    if moment - now > MAX_WAIT:
        return None
    return max(moment, now)


__all__ = ["MAX_WAIT", "MAX_WAKES", "UsageLimit", "usage_limit"]
