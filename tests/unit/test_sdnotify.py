"""sd_notify against real AF_UNIX datagram sockets bound by the test (path and abstract)."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from alpd.sdnotify import Notifier


@pytest.fixture
def path_listener(tmp_path: Path) -> Iterator[tuple[socket.socket, str]]:
    path = str(tmp_path / "notify.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(path)
        sock.settimeout(5)
        yield sock, path


@pytest.fixture
def abstract_listener() -> Iterator[tuple[socket.socket, str]]:
    name = f"alp-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(5)
        yield sock, "@" + name


def test_ready_reaches_a_path_socket(path_listener: tuple[socket.socket, str]) -> None:
    sock, path = path_listener
    Notifier.from_environ({"NOTIFY_SOCKET": path}).ready()
    assert sock.recv(4096) == b"READY=1\n"


def test_at_prefix_means_an_abstract_socket(
    abstract_listener: tuple[socket.socket, str],
) -> None:
    sock, name = abstract_listener
    Notifier.from_environ({"NOTIFY_SOCKET": name}).stopping()
    assert sock.recv(4096) == b"STOPPING=1\n"


def test_several_fields_go_in_one_utf8_datagram(
    path_listener: tuple[socket.socket, str],
) -> None:
    sock, path = path_listener
    Notifier.from_environ({"NOTIFY_SOCKET": path}).notify(READY=1, STATUS="prêt: 3 threads")
    assert sock.recv(4096) == "READY=1\nSTATUS=prêt: 3 threads\n".encode()


def test_status_and_watchdog_keys(path_listener: tuple[socket.socket, str]) -> None:
    sock, path = path_listener
    notifier = Notifier.from_environ({"NOTIFY_SOCKET": path})
    notifier.status("reconciling")
    notifier.watchdog()
    assert [sock.recv(4096), sock.recv(4096)] == [b"STATUS=reconciling\n", b"WATCHDOG=1\n"]


def test_newline_in_a_value_is_refused_before_sending(
    path_listener: tuple[socket.socket, str],
) -> None:
    _, path = path_listener
    with pytest.raises(ValueError, match="newline"):
        Notifier.from_environ({"NOTIFY_SOCKET": path}).status("a\nREADY=1")


def test_the_variables_are_popped_so_children_cannot_inherit_them(
    path_listener: tuple[socket.socket, str],
) -> None:
    _, path = path_listener
    env = {"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "1", "WATCHDOG_PID": "1", "PATH": "/bin"}
    Notifier.from_environ(env)
    assert env == {"PATH": "/bin"}


def test_without_notify_socket_every_call_is_a_no_op() -> None:
    env = {"WATCHDOG_USEC": "30000000"}
    notifier = Notifier.from_environ(env)
    notifier.ready()
    notifier.watchdog()
    assert notifier.address is None
    assert notifier.watchdog_interval is None
    assert env == {}


def test_watchdog_interval_is_half_of_watchdog_usec(
    path_listener: tuple[socket.socket, str],
) -> None:
    _, path = path_listener
    env = {"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(os.getpid())}
    assert Notifier.from_environ(env).watchdog_interval == 15.0


def test_watchdog_without_pid_applies_to_us(path_listener: tuple[socket.socket, str]) -> None:
    _, path = path_listener
    env = {"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "2000000"}
    assert Notifier.from_environ(env).watchdog_interval == 1.0


@pytest.mark.parametrize(
    ("usec", "pid"),
    [("30000000", "1"), ("", ""), ("0", ""), ("soon", "")],
    ids=["other-pid", "unset", "zero", "garbage"],
)
def test_watchdog_is_off_unless_meant_for_this_process(
    path_listener: tuple[socket.socket, str], usec: str, pid: str
) -> None:
    _, path = path_listener
    env = {"NOTIFY_SOCKET": path, "WATCHDOG_USEC": usec, "WATCHDOG_PID": pid}
    assert Notifier.from_environ(env).watchdog_interval is None


def test_unsupported_address_is_an_error_not_a_silent_start_timeout() -> None:
    with pytest.raises(ValueError, match="vsock"):
        Notifier.from_environ({"NOTIFY_SOCKET": "vsock:2:1234"})


def test_send_failure_reaches_the_caller(tmp_path: Path) -> None:
    notifier = Notifier.from_environ({"NOTIFY_SOCKET": str(tmp_path / "gone.sock")})
    with pytest.raises(OSError):
        notifier.ready()
