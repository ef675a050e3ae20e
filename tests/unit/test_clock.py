"""The one clock (alpctl.clock, and the web page's filter): local time with its zone in one
shape, whatever the moment's own offset."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alpctl.clock import local_time
from alpd.web.view import local_time as page_time


@pytest.fixture(autouse=True)
def berlin() -> Iterator[None]:
    before = os.environ.get("TZ")
    os.environ["TZ"] = "Europe/Berlin"
    time.tzset()
    yield
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()


def test_a_utc_time_is_shown_in_the_local_zone() -> None:
    assert local_time("2026-12-02T08:41:00.123Z") == "2026-12-02 09:41 CET"
    assert local_time("2026-07-02T08:41:00Z") == "2026-07-02 10:41 CEST"
    assert local_time(None) == "-" and local_time("soon") == "soon"


moments = st.datetimes(
    min_value=datetime(1971, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)


@given(moment=moments, offset=st.integers(-12 * 60, 14 * 60))
def test_the_client_and_the_page_agree_whatever_the_offset(moment: datetime, offset: int) -> None:
    zone = timezone(timedelta(minutes=offset))
    iso = moment.astimezone(zone).isoformat()
    assert local_time(iso) == page_time(iso)
    assert local_time(moment.isoformat().replace("+00:00", "Z")) == page_time(iso)
