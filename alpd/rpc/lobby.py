"""Where an accepted connection waits for its first complete frame, without a task of its own.

A slowloris crowd holds connections that never finish a frame. Given a `Connection` each
(a task group, three tasks, a semaphore, a lock, a memory stream: some 150 objects the
garbage collector tracks), a thousand of them, reconnecting at every frame deadline, kept
hundreds of thousands of young objects alive and left cycles at every close: collections of
the younger generations took 10-140 ms of CPU under the crowd, and the owner's
connect-and-ping waited behind them (bench/bench_slowloris.py, docs/benchmarks.md).

In the lobby a connection is a socket, a byte buffer and one small record, read by a
callback on the event loop: no task, no cancel scope, no timer. It leaves the lobby

- for a `Connection` task (`start`), with the bytes read so far, as soon as those bytes may
  hold a frame's end (a newline: NDJSON's end, or the end of a Content-Length header line),
  reach `HANDOFF_BYTES`, or the peer half-closes with something to say — the common case,
  an `alp` call, is handed off at its first read;
- closed with FRAME_TIMEOUT (in the framing its first byte chose) once its partial frame has
  waited `frame_deadline` since its first byte;
- closed without a word once it has sent nothing for `idle_timeout`, or at EOF with no
  frame's end in what it sent (what `Connection` did with such a peer).

One sweeper task keeps every deadline (a pass over the lobby every `SWEEP_INTERVAL`, or a
quarter of the shorter limit); deadlines are spread per connection as `Connection`'s are.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import socket
import time
from collections.abc import Callable
from typing import Any, Final

import anyio
import structlog

from alpd.rpc.connection import DEADLINE_SPREAD, READ_CHUNK, ConnectionLimits
from protocol import errors, jsonrpc
from protocol.framing import HEAD_BYTES, Framing, encode_frame

#: a buffer this long goes to a Connection whatever it holds (its decoder decides: a header
#: block too long, a line over the cap); below MAX_HEADER_BYTES so those refusals are its
HANDOFF_BYTES: Final = HEAD_BYTES
SWEEP_INTERVAL: Final = 0.5

_BLANK: Final = b" \t\r\n"

log = structlog.get_logger("alpd.rpc")

#: starts serving a connection that left the lobby: (socket, bytes read, when its partial
#: frame began, the tag it was admitted with)
Start = Callable[[socket.socket, bytes, float | None, Any], None]
#: told (with its tag) when a connection leaves the lobby closed: its place under the cap is free
Closed = Callable[[Any], None]


class _Waiting:
    __slots__ = ("buffer", "fd", "frame_deadline", "idle_until", "partial_since", "sock", "tag")

    def __init__(self, sock: socket.socket, limits: ConnectionLimits, tag: Any) -> None:
        spread = 1.0 + DEADLINE_SPREAD * random.random()
        self.sock = sock
        self.fd = sock.fileno()
        self.buffer = bytearray()
        self.partial_since: float | None = None
        self.frame_deadline = limits.frame_deadline * spread
        self.idle_until = time.monotonic() + limits.idle_timeout * spread
        self.tag = tag


class Lobby:
    """Accepted connections that have not yet sent a frame's end."""

    def __init__(self, limits: ConnectionLimits, start: Start, closed: Closed) -> None:
        self._limits = limits
        self._start = start
        self._closed = closed
        self._waiting: dict[int, _Waiting] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    def __len__(self) -> int:
        return len(self._waiting)

    def admit(self, sock: socket.socket, tag: Any) -> None:
        """Take a non-blocking accepted socket; `tag` goes with it to `start` or `closed`."""
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        waiting = _Waiting(sock, self._limits, tag)
        self._waiting[waiting.fd] = waiting
        self._loop.add_reader(waiting.fd, self._readable, waiting)

    def _readable(self, waiting: _Waiting) -> None:
        try:
            data = waiting.sock.recv(READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            self._close(waiting)
            return
        if not data:
            # EOF: a Connection would wait for the rest of a frame that can no longer come.
            self._close(waiting)
            return
        waiting.buffer += data
        if b"\n" in data or len(waiting.buffer) >= HANDOFF_BYTES:
            self._leave(waiting)
            self._start(waiting.sock, bytes(waiting.buffer), waiting.partial_since, waiting.tag)
        elif waiting.partial_since is None and waiting.buffer.strip(_BLANK):
            waiting.partial_since = time.monotonic()

    def _leave(self, waiting: _Waiting) -> None:
        del self._waiting[waiting.fd]
        if self._loop is not None:
            self._loop.remove_reader(waiting.fd)

    def _close(self, waiting: _Waiting, farewell: bytes | None = None) -> None:
        self._leave(waiting)
        sock = waiting.sock
        with contextlib.suppress(OSError):
            if farewell is not None:
                sock.send(farewell)
                sock.shutdown(socket.SHUT_WR)
            # Read what the peer sent (without waiting): closing with unread bytes would make
            # its next read fail with ECONNRESET instead of returning our farewell and EOF.
            while sock.recv(READ_CHUNK):
                pass
        sock.close()
        self._closed(waiting.tag)

    def sweep(self, now: float) -> None:
        """Close every connection past its deadline."""
        expired: list[tuple[_Waiting, bool]] = []
        for waiting in self._waiting.values():
            if waiting.partial_since is not None:
                if now - waiting.partial_since >= waiting.frame_deadline:
                    expired.append((waiting, True))
            elif now >= waiting.idle_until:
                expired.append((waiting, False))
        for waiting, stalled in expired:
            if stalled:
                log.warning("frame_timeout", fd=waiting.fd)
                self._close(waiting, _frame_timeout(waiting.buffer))
            else:
                log.info("connection_idle", fd=waiting.fd)
                self._close(waiting)

    async def sweep_forever(self) -> None:
        """The one task that keeps every deadline of the lobby; closes what is left at exit."""
        interval = min(
            SWEEP_INTERVAL, self._limits.frame_deadline / 4, self._limits.idle_timeout / 4
        )
        try:
            while True:
                await anyio.sleep(interval)
                self.sweep(time.monotonic())
        finally:
            for waiting in list(self._waiting.values()):
                self._close(waiting)


def _frame_timeout(buffer: bytearray) -> bytes:
    first = buffer.lstrip(_BLANK)[:1]
    framing = Framing.CONTENT_LENGTH if first and first in b"Cc" else Framing.NDJSON
    payload = jsonrpc.encode_error(
        None,
        errors.code_of("FRAME_TIMEOUT"),
        "a partial message stalled",
        {"name": "FRAME_TIMEOUT"},
    )
    return encode_frame(framing, payload)
