"""Fixtures shared by every kind of test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from alpd.testing.daemon import DaemonProcess, running_daemon


@pytest.fixture
def alpd(tmp_path: Path) -> Iterator[DaemonProcess]:
    """A real alpd on a temporary home and socket."""
    with running_daemon(tmp_path) as daemon:
        yield daemon
