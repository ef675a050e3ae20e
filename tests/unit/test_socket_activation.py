"""Socket activation in a real child process that finds its socket at fd 3, as under systemd,
and the environment scrub for children."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from alpd.socket_activation import (
    SYSTEMD_ENV_VARS,
    SocketActivationError,
    listen_fds,
    scrub_systemd_env,
)

# Stage 1 does what systemd does between fork and exec: put the socket at fd 3 and set
# LISTEN_PID to the pid that exec keeps. Stage 2 is the "daemon": it calls listen_fds.
_STAGE1 = """
import os, sys
fd = int(sys.argv[1])
if fd >= 0:
    os.dup2(fd, 3)
    os.close(fd)
os.environ["LISTEN_PID"] = str(os.getpid())
os.execv(sys.executable, [sys.executable, "-c", sys.argv[2]])
"""

_STAGE2 = """
import json, os
from alpd.socket_activation import SocketActivationError, listen_fds
try:
    socks = listen_fds(os.environ)
except SocketActivationError as exc:
    print(json.dumps({"error": str(exc)}))
else:
    print(json.dumps({
        "sockets": [
            {"fd": s.fileno(), "family": s.family.name, "type": s.type.name,
             "name": s.getsockname(), "inheritable": s.get_inheritable()}
            for s in socks
        ],
        "env": sorted(k for k in os.environ if k.startswith("LISTEN_")),
    }))
"""


def _activate(sock: socket.socket | None, **env: str) -> dict[str, Any]:
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("LISTEN_")}
    child_env.update(env)
    fd = sock.fileno() if sock is not None else -1
    done = subprocess.run(
        [sys.executable, "-c", _STAGE1, str(fd), _STAGE2],
        pass_fds=(fd,) if sock is not None else (),
        env=child_env,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.fixture
def unix_listener(tmp_path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(tmp_path / "alpd.sock"))
    sock.listen()
    return sock


def test_activated_unix_listener_is_adopted_from_fd_3(
    unix_listener: socket.socket, tmp_path: Path
) -> None:
    with unix_listener:
        found = _activate(unix_listener, LISTEN_FDS="1", LISTEN_FDNAMES="alpd.socket")
    assert found["sockets"] == [
        {
            "fd": 3,
            "family": "AF_UNIX",
            "type": "SOCK_STREAM",
            "name": str(tmp_path / "alpd.sock"),
            "inheritable": False,
        }
    ]
    assert found["env"] == []


def test_datagram_socket_at_fd_3_is_refused() -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        found = _activate(sock, LISTEN_FDS="1")
    assert "fd 3 is AF_UNIX/SOCK_DGRAM" in found["error"]


def test_tcp_listener_at_fd_3_is_refused() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        found = _activate(sock, LISTEN_FDS="1")
    assert "fd 3 is AF_INET/SOCK_STREAM" in found["error"]


def test_unix_stream_socket_that_is_not_listening_is_refused(tmp_path: Path) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.bind(str(tmp_path / "idle.sock"))
        found = _activate(sock, LISTEN_FDS="1")
    assert "not listening" in found["error"]


def test_fd_count_beyond_what_was_passed_is_refused(unix_listener: socket.socket) -> None:
    with unix_listener:
        found = _activate(unix_listener, LISTEN_FDS="2")
    assert "fd 4 is not an open socket" in found["error"]


def test_no_fds_when_listen_fds_is_zero() -> None:
    assert _activate(None, LISTEN_FDS="0") == {"sockets": [], "env": []}


def test_variables_for_another_pid_are_ignored_and_popped() -> None:
    env = {"LISTEN_PID": "1", "LISTEN_FDS": "1", "LISTEN_FDNAMES": "x", "HOME": "/h"}
    assert listen_fds(env) == []
    assert env == {"HOME": "/h"}


def test_not_socket_activated_gives_no_sockets() -> None:
    assert listen_fds({}) == []


def test_garbage_listen_fds_for_this_pid_is_an_error() -> None:
    env = {"LISTEN_PID": str(os.getpid()), "LISTEN_FDS": "three"}
    with pytest.raises(SocketActivationError, match="three"):
        listen_fds(env)


def test_scrub_removes_every_systemd_variable_and_keeps_the_rest() -> None:
    env = dict.fromkeys(SYSTEMD_ENV_VARS, "x") | {"PATH": "/bin", "ALP_SOCKET": "/s"}
    assert scrub_systemd_env(env) == {"PATH": "/bin", "ALP_SOCKET": "/s"}
    assert set(SYSTEMD_ENV_VARS) <= env.keys()  # the input is left alone


def test_scrub_list_names_all_six_variables() -> None:
    assert set(SYSTEMD_ENV_VARS) == {
        "NOTIFY_SOCKET",
        "LISTEN_FDS",
        "LISTEN_PID",
        "LISTEN_FDNAMES",
        "WATCHDOG_USEC",
        "WATCHDOG_PID",
    }
