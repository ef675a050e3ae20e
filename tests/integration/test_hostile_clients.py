"""What one client can do to the daemon, and what it must not (issue 9, crashes and hangs).

Each test is a reproduction from an adversarial review: the frame, the connection pattern or
the idle crowd that used to end alpd or lock its owner out, now ending only the connection
that caused it.
"""

from __future__ import annotations

from typing import Any

import pytest
from wire import RawConnection, assert_no_traceback

from alpd.testing.daemon import DaemonProcess
from protocol import errors


def assert_serving(daemon: DaemonProcess) -> None:
    assert daemon.process is not None and daemon.process.poll() is None, daemon.log_text()
    with RawConnection(daemon.socket_path) as conn:
        reply: dict[str, Any] = conn.request("daemon/ping")
    assert reply["result"]["pid"] == daemon.pid


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
