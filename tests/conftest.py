"""Fixtures shared by every kind of test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

# Under CI=true a skipped e2e or needs_root test fails (tests/ci_gate.py).
from ci_gate import pytest_runtest_makereport  # noqa: F401
from hypothesis import HealthCheck, settings
from postgres_cluster import Cluster, find_bin, running_cluster

from alpd.testing.daemon import DaemonProcess, running_daemon

# The machines the suite runs on are small and shared: how fast an example is generated or
# run is the machine's load, not a property under test (speed belongs in bench/). No
# per-example deadline, no health check failing a test for slow data generation.
settings.register_profile("alp", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("alp")


@pytest.fixture
def alpd(tmp_path: Path) -> Iterator[DaemonProcess]:
    """A real alpd on a temporary home and socket."""
    with running_daemon(tmp_path) as daemon:
        yield daemon


# The store's backends (docs/many-machines.md). A test, class or module marked `both_stores`
# runs on SQLite and on PostgreSQL: the fixtures below give it `store_url` (None on SQLite, a
# fresh database's URL on PostgreSQL), which `start_alpd` passes to alpd as ALP_STORE_URL.


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "store_backend" in metafunc.fixturenames and metafunc.definition.get_closest_marker(
        "both_stores"
    ):
        metafunc.parametrize(
            "store_backend",
            ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)],
            indirect=True,
            scope="module",
        )


@pytest.fixture(scope="module")
def store_backend(request: pytest.FixtureRequest) -> str:
    """`sqlite` (the default), or `postgres` for a `both_stores` test's second run."""
    return str(getattr(request, "param", "sqlite"))


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[Cluster]:
    """A private PostgreSQL cluster for the whole session (tests/postgres_cluster.py)."""
    bin_dir = find_bin()
    if bin_dir is None:
        pytest.skip("PostgreSQL's server is not installed (make postgres installs it)")
    with running_cluster(bin_dir) as cluster:
        yield cluster


def _database(store_backend: str, request: pytest.FixtureRequest) -> Iterator[str | None]:
    if store_backend != "postgres":
        yield None
        return
    cluster: Cluster = request.getfixturevalue("postgres_cluster")
    url = cluster.new_database()
    try:
        yield url
    finally:
        cluster.drop_database(url)


@pytest.fixture
def store_url(store_backend: str, request: pytest.FixtureRequest) -> Iterator[str | None]:
    """The database of one test: None on SQLite (the home's file), a fresh one on PostgreSQL."""
    yield from _database(store_backend, request)


@pytest.fixture(scope="module")
def module_store_url(store_backend: str, request: pytest.FixtureRequest) -> Iterator[str | None]:
    """`store_url` for a daemon shared by a module."""
    yield from _database(store_backend, request)
