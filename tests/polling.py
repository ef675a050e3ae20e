"""Waiting for a real daemon to reach a state, for tests that cannot subscribe to it.

One poller for every test file: it returns the first truthy value `predicate` gives and
fails the test, naming what it waited for, once `timeout` has passed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_for(
    predicate: Callable[[], Any], timeout: float = 30.0, what: str = "", interval: float = 0.05
) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what or predicate}")
