"""Closing the thin client while another thread waits on it for notifications (a listener)
returns at once and ends that wait: the buffered reader's close would otherwise wait for
the blocked read for ever, beyond even a signal's reach (how test_transcript_live hung)."""

from __future__ import annotations

import socket
import threading
import time

from alpctl.client import Client, DaemonUnreachable


def test_close_ends_a_listeners_blocked_read_and_returns_at_once() -> None:
    ours, daemon = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    client = Client("/nonexistent.sock", ours)
    ended: list[BaseException] = []

    def listen() -> None:
        try:
            for _ in client.notifications():
                pass
        except (DaemonUnreachable, OSError, ValueError) as exc:
            ended.append(exc)

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    time.sleep(0.2)  # the listener is blocked in its read
    started = time.monotonic()
    closer = threading.Thread(target=client.close, daemon=True)
    closer.start()
    closer.join(5)
    assert not closer.is_alive(), "close waited for the listener's read"
    assert time.monotonic() - started < 5
    listener.join(5)
    assert not listener.is_alive()
    assert ended
    daemon.close()


def test_close_of_a_connection_the_daemon_closed_is_quiet() -> None:
    ours, daemon = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    daemon.close()
    Client("/nonexistent.sock", ours).close()
