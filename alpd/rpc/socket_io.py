"""Reading and writing an accepted Unix socket with the event loop's own socket calls.

anyio's socket stream yields to the loop before every receive and every send and re-arms
the reader for each wait: two extra loop cycles and two epoll_ctl calls per round trip,
about half of what a ping costs here (bench/bench_rpc.py). This wrapper tries the
non-blocking syscall first and only waits — through `loop.sock_recv`/`sock_sendall`, which
uvloop implements natively — when the kernel has nothing for us. It still yields every
`YIELD_EVERY` reads so a client that pipelines requests cannot starve the others.
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
            try:
                data = self._sock.recv(max_bytes)
            except BlockingIOError:
                data = await self._loop.sock_recv(self._sock, max_bytes)
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
