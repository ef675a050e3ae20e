"""End-to-end fixtures: network isolation, the pinned runtime CLIs, the scripted model server.

Isolation. When this conftest is loaded by a pytest process running as root, its
``pytest_configure`` moves the whole pytest process into a new, empty network namespace
(``unshare(CLONE_NEWNET)`` through libc, then the loopback interface is brought up with an
``SIOCSIFFLAGS`` ioctl). This happens before any test runs, so everything an e2e test starts —
the model server thread, a real ``alpd`` (Unix sockets are filesystem objects and work across
namespaces), and the ``claude``/``codex`` processes it or the test spawns — inherits a network
with only ``lo``: a connection to any other address fails with ``ENETUNREACH`` and DNS cannot
resolve. Namespaces are per thread in Linux, so this must run while pytest is still single
threaded; ``pytest_configure`` is that point. The namespace also covers the other test
directories collected in the same session, which is what "no test may reach any address off
this machine" asks for anyway.

Tests marked ``e2e`` need isolation and the binaries. Without them they are skipped with the
reason — except under ``CI=true``, where a missing part fails the test instead (a CI run that
silently skips its end-to-end tests proves nothing).
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import shutil
import socket
import struct
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import runtimes  # tests/e2e is on sys.path (pytest's prepend import mode)
from model_server import ModelServer

CLONE_NEWNET = 0x40000000
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1
ISOLATED_ENV = "ALP_E2E_NETNS"

_isolation_problem: str | None = "network isolation was not attempted"


def _bring_loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(sock.fileno(), SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock.fileno(), SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


def isolate_network() -> str | None:
    """Move this process into an empty network namespace; return why not, or None on success."""
    if os.environ.get(ISOLATED_ENV) == str(os.getpid()):
        return None
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "not root: creating a network namespace needs CAP_SYS_ADMIN"
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        code = ctypes.get_errno()
        return f"unshare(CLONE_NEWNET) failed: {errno.errorcode.get(code, code)}"
    try:
        _bring_loopback_up()
    except OSError as exc:
        return f"could not bring lo up in the new network namespace: {exc}"
    os.environ[ISOLATED_ENV] = str(os.getpid())
    return None


def pytest_configure(config: pytest.Config) -> None:
    global _isolation_problem
    _isolation_problem = isolate_network()


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def skip_or_fail(reason: str) -> None:
    """Skip with ``reason``; under CI=true fail instead."""
    if in_ci():
        pytest.fail(f"CI=true and an e2e prerequisite is missing: {reason}", pytrace=False)
    pytest.skip(reason)


def isolation_problem() -> str | None:
    return _isolation_problem


@pytest.fixture(autouse=True)
def _e2e_needs_isolation(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("e2e") is not None and _isolation_problem is not None:
        skip_or_fail(f"e2e tests run only in an empty network namespace: {_isolation_problem}")


@pytest.fixture
def claude_bin() -> Path:
    try:
        return runtimes.claude_binary()
    except runtimes.RuntimeNotInstalled as exc:
        skip_or_fail(str(exc))
        raise


@pytest.fixture
def codex_bin() -> Path:
    try:
        return runtimes.codex_binary()
    except runtimes.RuntimeNotInstalled as exc:
        skip_or_fail(str(exc))
        raise


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A scratch folder NOT under /tmp (Codex refuses to put helper binaries under a temp
    dir and warns when CODEX_HOME is there); removed afterwards."""
    parent = Path.home() / ".cache" / "alp-e2e"
    parent.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix="run-", dir=parent))
    yield path
    shutil.rmtree(path, ignore_errors=True)


# A whole alp world (a real alpd whose runs reach the scripted model server) and pseudo-terminal
# sessions, for the tests that drive alp itself with the real CLIs; defined in fixtures_alp.py.
from fixtures_alp import alp_world, make_world, pty_sessions  # noqa: E402, F401
