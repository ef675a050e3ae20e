"""Fixtures of the integration tests: a real alpd with the config a test file needs, and a
workspace to run in.

A file whose agents need a config overrides `d` through the factory:

    @pytest.fixture
    def d(start_alpd: StartAlpd) -> DaemonProcess:
        return start_alpd(CONFIG)

`start_module_alpd` is the same factory for a daemon shared by a whole module. A file that
needs more in its workspace overrides `work` by asking for it (`def work(work: Path)`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from daemons import StartAlpd, starter

from alpd.testing.daemon import DaemonProcess


@pytest.fixture
def start_alpd(tmp_path: Path, store_url: str | None) -> Iterator[StartAlpd]:
    with ExitStack() as stack:
        yield starter(tmp_path, stack, store_url)


@pytest.fixture(scope="module")
def start_module_alpd(
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
    module_store_url: str | None,
) -> Iterator[StartAlpd]:
    with ExitStack() as stack:
        yield starter(tmp_path_factory.mktemp(request.module.__name__), stack, module_store_url)


@pytest.fixture
def d(start_alpd: StartAlpd) -> DaemonProcess:
    """A real alpd with no config file."""
    return start_alpd()


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A directory to run in: a workspace of its own (no `.git` above it)."""
    path = tmp_path / "work"
    path.mkdir(exist_ok=True)
    return path
