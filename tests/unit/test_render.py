"""Output for people: times in local time, tables, colour only where it belongs."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from alpctl.clock import epoch_of
from alpctl.invocation import colour_wanted
from alpctl.render import Style, no_threads, thread_list


@given(
    st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2400, 1, 1)),
    st.integers(min_value=-14 * 60, max_value=14 * 60),
)
def test_epoch_of_agrees_with_datetime(moment: datetime, offset_minutes: int) -> None:
    moment = moment.replace(microsecond=moment.microsecond // 1000 * 1000)
    zone = timezone(timedelta(minutes=offset_minutes))
    aware = moment.replace(tzinfo=zone)
    iso = aware.isoformat(timespec="milliseconds")
    assert epoch_of(iso) == aware.timestamp()
    utc = aware.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    assert epoch_of(utc) == aware.timestamp()


def test_epoch_of_refuses_what_is_not_a_time() -> None:
    assert epoch_of("yesterday") is None
    assert epoch_of("2026-13") is None


def _thread(**fields: Any) -> dict[str, Any]:
    return {
        "id": "thread_1",
        "status": "open",
        "revision": 3,
        "updatedAt": "2026-11-30T10:00:00.000Z",
        "workspace": "/w/repo",
        "title": "pricing",
        **fields,
    }


def test_a_terminal_gets_a_header_and_all_gets_the_workspace_column() -> None:
    result = {"threads": [_thread(), _thread(id="thread_2", busyRoot="exec_9")]}
    text = thread_list(result, {"all": True}, header=True).splitlines()
    assert text[0].split() == ["ID", "STATUS", "REV", "UPDATED", "WORKSPACE", "TITLE"]
    assert "/w/repo" in text[1]
    assert "open busy" in text[2]
    piped = thread_list(result, {"cwd": "/w/repo"}).splitlines()
    assert len(piped) == 2 and "/w/repo" not in piped[0]


def test_colour_only_when_styled() -> None:
    result = {"threads": [_thread()]}
    assert "\x1b[" not in thread_list(result, {}, header=True)
    assert "\x1b[1m" in thread_list(result, {}, header=True, style=Style(colour=True))


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_is_wanted_on_a_terminal_unless_no_color() -> None:
    assert colour_wanted(_Tty(), {})
    assert not colour_wanted(_Tty(), {"NO_COLOR": "1"})
    assert not colour_wanted(_Tty(), {"TERM": "dumb"})
    assert not colour_wanted(io.StringIO(), {})


def test_an_empty_list_names_its_filter() -> None:
    assert no_threads({"cwd": "/w", "statuses": ["open"]}).startswith("no open threads in /w")
    assert no_threads({"all": True}).startswith("no threads in any workspace")
