"""What one client can do to the daemon, and what it must not (issue 9, crashes and hangs).

Each test is a reproduction from an adversarial review: the frame, the connection pattern or
the idle crowd that used to end alpd or lock its owner out, now ending only the connection
that caused it.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from polling import wait_for
from wire import RawConnection, assert_no_traceback

from alpd.events import MAX_PENDING
from alpd.rpc.listener import FD_RESERVE, WEB_RESERVE, connection_cap
from alpd.testing.daemon import DaemonProcess, running_daemon
from protocol import errors

PING = b'{"jsonrpc":"2.0","id":1,"method":"daemon/ping"}\n'
LINUX_PROC = pytest.mark.skipif(sys.platform != "linux", reason="counts fds in /proc")


def assert_serving(daemon: DaemonProcess) -> None:
    assert daemon.process is not None and daemon.process.poll() is None, daemon.log_text()
    served_connection(daemon).close()


@pytest.mark.parametrize(
    "frame",
    [
        # Python refuses to parse an int of more than 4,300 digits with its own ValueError.
        b"Content-Length: " + b"9" * 4301 + b"\r\n\r\n",
        b"Content-Length: " + b"0" * 5000 + b"2\r\n\r\n{}",
        # A header block over the 8 KiB cap that arrives whole, terminator included.
        b"Content-Length: 2\r\nX-Pad: " + b"a" * 9 * 1024 + b"\r\n\r\n{}",
    ],
    ids=["4301-digits", "leading-zeros", "9KiB-header-block"],
)
def test_an_unreadable_header_ends_only_its_connection(alpd: DaemonProcess, frame: bytes) -> None:
    with RawConnection(alpd.socket_path) as conn:
        conn.send(frame)
        rest = conn.read_until_closed()
    assert str(errors.PARSE_ERROR).encode() in rest, rest
    assert_no_traceback(rest.decode(errors="replace"))
    assert_serving(alpd)


# Running out of descriptors, and crowds of connections


@contextlib.contextmanager
def fd_limit(soft: int) -> Iterator[None]:
    """Processes started inside inherit a soft RLIMIT_NOFILE of `soft`."""
    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, before[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, before)


def open_fds(daemon: DaemonProcess) -> int:
    return len(os.listdir(f"/proc/{daemon.pid}/fd"))


def connections(daemon: DaemonProcess) -> int:
    """The connections the daemon holds open (this status call's included)."""
    status = daemon.call("daemon/status")
    assert isinstance(status, dict)
    return int(status["connections"])


def connect(daemon: DaemonProcess) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.connect(str(daemon.socket_path))
    return sock


def served_connection(daemon: DaemonProcess) -> socket.socket:
    """A connection the daemon serves (retried while it still counts an earlier client, such
    as its start probe, that has already left)."""
    for _ in range(200):
        sock = connect(daemon)
        sock.sendall(PING)
        reply = json.loads(sock.recv(65536).split(b"\n")[0])
        if "result" in reply:
            assert reply["result"]["pid"] == daemon.pid
            return sock
        sock.close()
        time.sleep(0.01)
    raise AssertionError(f"never served: {reply}")


def read_to_eof(sock: socket.socket) -> bytes:
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received


@LINUX_PROC
def test_accept_out_of_descriptors_waits_and_serves_the_backlog_later(tmp_path: Path) -> None:
    with running_daemon(tmp_path) as daemon:
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        resource.prlimit(daemon.pid, resource.RLIMIT_NOFILE, (open_fds(daemon) + 3, hard))
        held = [connect(daemon) for _ in range(40)]
        try:
            for sock in held:
                sock.sendall(PING)
            time.sleep(1.0)  # long enough for many EMFILE retries, if the daemon survives them
            assert daemon.process is not None and daemon.process.poll() is None
            resource.prlimit(daemon.pid, resource.RLIMIT_NOFILE, (4096, hard))
            for sock in held:
                reply = json.loads(sock.recv(65536).split(b"\n")[0])
                assert reply["result"]["pid"] == daemon.pid
        finally:
            for sock in held:
                sock.close()
        assert "accept_failed" in daemon.log_text()
        assert_serving(daemon)


def test_connection_cap_follows_the_fd_limit_and_refusals_are_closed_at_once(
    tmp_path: Path,
) -> None:
    soft = 500
    cap = connection_cap(soft)
    assert cap == soft - FD_RESERVE - WEB_RESERVE
    with fd_limit(soft), running_daemon(tmp_path, extra_args=["--idle-timeout", "600"]) as d:
        held = [served_connection(d) for _ in range(cap)]
        try:
            baseline = open_fds(d)
            # Refused peers that never close their end: each gets its error and an EOF, and
            # the daemon keeps none of them (it used to hold each for a second).
            refused = [connect(d) for _ in range(100)]
            for sock in refused:
                reply = json.loads(read_to_eof(sock))
                assert reply["error"]["data"]["name"] == "TOO_MANY_CONNECTIONS", reply
            assert open_fds(d) < baseline + 10
            for sock in refused:
                sock.close()
        finally:
            for sock in held:
                sock.close()
        assert_serving(d)


def test_idle_connections_are_closed_so_an_idle_crowd_cannot_lock_the_owner_out(
    tmp_path: Path,
) -> None:
    soft = 300
    with (
        fd_limit(soft),
        running_daemon(tmp_path, extra_args=["--idle-timeout", "1"]) as d,
        RawConnection(d.socket_path) as subscriber,
    ):
        subscribed = subscriber.request("events/subscribe", {})
        assert "result" in subscribed, subscribed
        while subscriber.request("daemon/status")["result"]["connections"] > 1:
            time.sleep(0.01)  # the daemon has yet to see its start probe leave
        # The rest of the cap, held by clients that never say a word.
        crowd = [connect(d) for _ in range(connection_cap(soft) - 1)]
        try:
            for sock in crowd:
                assert read_to_eof(sock) == b""  # closed without a word
            assert_serving(d)
            # A subscription keeps its connection however quiet it is.
            subscriber.assert_quiet(2.0)
            assert "result" in subscriber.request("daemon/ping", id=2)
        finally:
            for sock in crowd:
                sock.close()


# A subscriber that stops reading


def test_a_subscriber_that_stops_reading_gets_subscriber_too_slow_then_eof(
    alpd: DaemonProcess,
) -> None:
    """It used to be cut without the farewell: the notifications had filled the socket
    buffer, and the farewell could not get through it."""
    alone = connections(alpd)  # the status call's own
    subscriber = connect(alpd)
    subscriber.sendall(b'{"jsonrpc":"2.0","id":"s","method":"events/subscribe","params":{}}\n')
    with RawConnection(alpd.socket_path, timeout=60) as writer:
        # More notifications than the outbound queue holds (MAX_PENDING) and the socket
        # buffer takes, while the subscriber reads nothing.
        for i in range(MAX_PENDING + 300):
            assert "result" in writer.request("thread/create", {"title": f"t{i}", "cwd": "/tmp"})
    # Slow indeed: still not reading until the daemon has dropped it (it gives a farewell
    # that does not fit at most a second before it closes).
    wait_for(lambda: connections(alpd) == alone, what="the daemon to close the subscriber")
    received = read_to_eof(subscriber).decode()
    subscriber.close()
    messages = [json.loads(line) for line in received.splitlines()]
    assert messages[0]["id"] == "s" and "result" in messages[0]
    notifications = messages[1:-1]
    assert notifications and all(m["method"] == "thread/changed" for m in notifications)
    farewell = messages[-1]
    assert farewell["error"]["data"]["name"] == "SUBSCRIBER_TOO_SLOW", farewell
    assert farewell["error"]["code"] == errors.code_of("SUBSCRIBER_TOO_SLOW")
    assert_serving(alpd)
