"""Fixtures shared by every kind of test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

# Under CI=true a skipped e2e or needs_root test fails (tests/ci_gate.py).
from ci_gate import pytest_runtest_makereport  # noqa: F401

from alpd.testing.daemon import DaemonProcess, running_daemon


@pytest.fixture
def alpd(tmp_path: Path) -> Iterator[DaemonProcess]:
    """A real alpd on a temporary home and socket."""
    with running_daemon(tmp_path) as daemon:
        yield daemon
