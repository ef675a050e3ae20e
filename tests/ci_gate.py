"""Under `CI=true`, a test that must run here and was skipped is a failure.

A CI run that skips its end-to-end tests, or the tests that need root (a second uid for the
peer-credential checks, chown, a network namespace), proves nothing while it goes green.
Locally, without root or without the runtimes, those tests skip with their reason; under
`CI=true` (`.ci/run` exports it) the skip is turned into a failure that names the test and
the reason. Which tests must run is said by their markers: `e2e`, `needs_root`, `editors`,
`browser`, `systemd` (systemd-analyze) and `postgres` (a store test's PostgreSQL run).

Loaded by `tests/conftest.py`; a plain pytest plugin (`-p ci_gate`), so its own test can run
it on a scratch test file.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import Final

import pytest

MUST_RUN: Final = ("e2e", "needs_root", "editors", "browser", "systemd", "postgres")


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    if not (report.skipped and in_ci()):
        return
    markers = [name for name in MUST_RUN if item.get_closest_marker(name) is not None]
    if not markers or hasattr(report, "wasxfail"):
        return
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    reason = reason.removeprefix("Skipped: ")
    report.outcome = "failed"
    report.longrepr = (
        f"CI=true and this {'/'.join(markers)} test was skipped: {reason}\n"
        "Under CI everything it needs must be there (`make test` installs it)."
    )
