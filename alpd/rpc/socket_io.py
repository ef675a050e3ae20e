"""Reading and writing an accepted Unix socket with the event loop's own socket calls.

anyio's socket stream yields to the loop before every receive and every send and re-arms
the reader for each wait: two extra loop cycles and two epoll_ctl calls per round trip,
about half of what a ping costs here (bench/bench_rpc.py). This wrapper tries the
non-blocking syscall first and only waits when the kernel has nothing for us: for a read,
on a reader it keeps registered with the loop while it is useful (registering and removing
one per wait, as `loop.sock_recv` does, is two epoll_ctl calls per round trip); for a write,
through `loop.sock_sendall`. It still yields every `YIELD_EVERY` reads so a client that
pipelines requests cannot starve the others.
Cancellation is anyio's (these are plain awaits in an anyio task).
"""

from __future__ import annotations

import asyncio
import select
import socket
from typing import Final

import anyio
import anyio.lowlevel

YIELD_EVERY: Final = 16


class SocketIO:
    def __init__(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        self._sock = sock
        self._loop = asyncio.get_running_loop()
        self._reads = 0
        self._poll = select.poll()
        self._poll.register(sock, select.POLLOUT)
        self._readable: asyncio.Future[None] | None = None
        self._watching = False

    def _on_readable(self) -> None:
        waiter, self._readable = self._readable, None
        if waiter is None:
            # Nobody waits (the reader is busy serving): level-triggered, this would fire
            # at every turn of the loop, so stop watching until the next wait.
            self._loop.remove_reader(self._sock.fileno())
            self._watching = False
        elif not waiter.done():
            waiter.set_result(None)

    async def _wait_readable(self) -> None:
        if not self._watching:
            self._loop.add_reader(self._sock.fileno(), self._on_readable)
            self._watching = True
        self._readable = self._loop.create_future()
        try:
            await self._readable
        finally:
            self._readable = None

    def close(self) -> None:
        """Stop watching the socket (before it is closed: its descriptor may be reused)."""
        if self._watching:
            self._loop.remove_reader(self._sock.fileno())
            self._watching = False

    async def wait_writable(self) -> None:
        """Until the kernel reports the socket writable: for a Unix stream socket on Linux,
        until at most a quarter of its send buffer is in flight, so whoever waits here
        before writing leaves the rest of the buffer to the others."""
        if not self._poll.poll(0):
            await anyio.wait_writable(self._sock)

    async def receive(self, max_bytes: int) -> bytes:
        """Bytes from the peer; raises anyio.EndOfStream at EOF, BrokenResourceError on error."""
        self._reads += 1
        if self._reads % YIELD_EVERY == 0:
            await anyio.lowlevel.checkpoint()
        try:
            while True:
                try:
                    data = self._sock.recv(max_bytes)
                    break
                except BlockingIOError:
                    await self._wait_readable()
        except OSError as exc:
            raise anyio.BrokenResourceError from exc
        if not data:
            raise anyio.EndOfStream
        return data

    async def send(self, data: bytes) -> None:
        try:
            try:
                sent = self._sock.send(data)
            except BlockingIOError:
                sent = 0
            if sent < len(data):
                await self._loop.sock_sendall(self._sock, memoryview(data)[sent:])
        except OSError as exc:
            raise anyio.BrokenResourceError from exc
