"""The web port holds against another local user (issue 21, point 6): a crowd of idle or
slow TCP connections, none of which needs a token to open, neither runs alpd out of
descriptors (the owner's CLI goes on) nor turns the owner's page into 503s.

Bounded loops on 127.0.0.1 only; alpd runs under a soft RLIMIT_NOFILE of 1024, the common
default, where 1,100 idle connections used to exhaust it.
"""

from __future__ import annotations

import contextlib
import os
import resource
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from webpage import WebPage, open_page

from alpd.testing.daemon import DaemonProcess, running_daemon

FD_LIMIT = 1024


@pytest.fixture
def d(tmp_path: Path) -> Iterator[DaemonProcess]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (FD_LIMIT, hard))
    try:
        with running_daemon(tmp_path) as daemon:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
            yield daemon
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


@contextlib.contextmanager
def crowd(page: WebPage, count: int, first_bytes: bytes = b"") -> Iterator[list[socket.socket]]:
    """`count` connections to the page, each having sent `first_bytes` (maybe nothing)."""
    host, port = page.address, page.port
    socks: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                sock.connect((host, port))
            socks.append(sock)
        time.sleep(0.2)  # let the handshakes complete before the first bytes
        if first_bytes:
            for sock in socks:
                with contextlib.suppress(OSError):
                    sock.send(first_bytes)
        yield socks
    finally:
        for sock in socks:
            sock.close()


def trickle(socks: list[socket.socket], rounds: int) -> None:
    """One more header byte on every connection, `rounds` times, a few per second."""
    for _ in range(rounds):
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.send(b"a")
        time.sleep(0.3)


def owner_gets_the_page(d: DaemonProcess, page: WebPage, cookie: str) -> None:
    started = time.monotonic()
    answer = page.request("GET", "/", cookie=cookie)
    assert answer.status == 200, (answer.status, answer.body[:300])
    assert time.monotonic() - started < 5
    listed = d.cli("thread", "list", "--json")
    assert listed.returncode == 0, listed.stderr


def test_a_thousand_idle_connections_leave_the_page_and_the_cli_working(
    d: DaemonProcess,
) -> None:
    page = open_page(d)
    cookie = page.log_in()
    with crowd(page, 1100):
        time.sleep(1.0)
        assert open_fds(d.pid) < FD_LIMIT - 256, open_fds(d.pid)
        owner_gets_the_page(d, page, cookie)
        assert d.call("daemon/ping")["pid"] == d.pid  # type: ignore[index]


def test_slow_requests_never_make_the_owners_page_503(d: DaemonProcess) -> None:
    page = open_page(d)
    cookie = page.log_in()
    head = f"GET / HTTP/1.1\r\nHost: {page.host}\r\nX-Slow: ".encode()
    with crowd(page, 300, head) as socks:
        trickle(socks, 3)
        owner_gets_the_page(d, page, cookie)
        trickle(socks, 3)
        owner_gets_the_page(d, page, cookie)


def test_a_request_head_that_never_ends_is_closed(d: DaemonProcess) -> None:
    page = open_page(d)
    head = f"GET / HTTP/1.1\r\nHost: {page.host}\r\nX-Slow: ".encode()
    with crowd(page, 1, head) as socks:
        sock = socks[0]
        sock.setblocking(True)
        sock.settimeout(30)
        deadline = time.monotonic() + 30
        closed = False
        while time.monotonic() < deadline:
            try:
                sock.send(b"a")
                data = sock.recv(4096, socket.MSG_DONTWAIT)
            except BlockingIOError:
                time.sleep(0.5)
                continue
            except OSError:
                closed = True
                break
            if data == b"" or b"408" in data:
                closed = True
                break
            time.sleep(0.5)
        assert closed, "a head trickled a byte at a time was kept open for 30 s"
