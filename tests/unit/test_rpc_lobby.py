"""The lobby: a connection that has not sent a frame's end costs no task, and its deadlines
are kept by one sweep (alpd/rpc/lobby.py; issue 21, point 6)."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from typing import Any

import anyio
import anyio.lowlevel

from alpd.rpc.connection import DEADLINE_SPREAD, ConnectionLimits
from alpd.rpc.lobby import HANDOFF_BYTES, Lobby

LIMITS = ConnectionLimits(frame_deadline=10.0, idle_timeout=120.0)


class Recorder:
    def __init__(self) -> None:
        self.started: list[tuple[bytes, float | None, Any]] = []
        self.closed: list[Any] = []

    def start(self, sock: socket.socket, data: bytes, since: float | None, tag: Any) -> None:
        self.started.append((data, since, tag))
        sock.close()

    def close(self, tag: Any) -> None:
        self.closed.append(tag)


def pair() -> tuple[socket.socket, socket.socket]:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    ours.setblocking(False)
    theirs.settimeout(5)
    return ours, theirs


async def turns(count: int = 5) -> None:
    for _ in range(count):
        await anyio.lowlevel.checkpoint()


def read_to_eof(sock: socket.socket) -> bytes:
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received


def test_a_crowd_trickling_frames_holds_no_task_and_each_leaves_at_its_newline() -> None:
    async def main() -> None:
        seen = Recorder()
        lobby = Lobby(LIMITS, seen.start, seen.close)
        tasks_before = len(asyncio.all_tasks())
        crowd = [pair() for _ in range(200)]
        for index, (ours, theirs) in enumerate(crowd):
            lobby.admit(ours, index)
            theirs.sendall(b'{"jsonrpc":"2.0","id":1,')
        await turns()
        assert len(lobby) == 200
        assert len(asyncio.all_tasks()) == tasks_before  # a socket and a buffer each
        assert seen.started == [] and seen.closed == []
        before = time.monotonic()
        crowd[7][1].sendall(b'"method":"daemon/ping"}\n')
        await turns()
        assert len(lobby) == 199
        [(data, since, tag)] = seen.started
        assert data == b'{"jsonrpc":"2.0","id":1,"method":"daemon/ping"}\n'
        assert tag == 7
        # the frame's deadline runs from its first byte, not from the handoff
        assert since is not None and since <= before
        for _, theirs in crowd:
            theirs.close()
        await turns()
        assert len(lobby) == 0 and sorted(seen.closed) == [i for i in range(200) if i != 7]

    anyio.run(main)


def test_a_whole_frame_in_the_first_read_leaves_at_once_with_no_partial_frame() -> None:
    async def main() -> None:
        seen = Recorder()
        lobby = Lobby(LIMITS, seen.start, seen.close)
        ours, theirs = pair()
        lobby.admit(ours, "owner")
        theirs.sendall(b'{"jsonrpc":"2.0","id":1,"method":"daemon/ping"}\n')
        await turns()
        assert seen.started == [
            (b'{"jsonrpc":"2.0","id":1,"method":"daemon/ping"}\n', None, "owner")
        ]
        theirs.close()

    anyio.run(main)


def test_a_long_partial_frame_leaves_for_its_connection_to_judge() -> None:
    async def main() -> None:
        seen = Recorder()
        lobby = Lobby(LIMITS, seen.start, seen.close)
        ours, theirs = pair()
        lobby.admit(ours, 1)
        theirs.sendall(b"C" * HANDOFF_BYTES)
        for _ in range(50):
            await turns()
            if seen.started:
                break
        assert len(seen.started) == 1 and len(seen.started[0][0]) == HANDOFF_BYTES
        theirs.close()

    anyio.run(main)


def test_a_stalled_partial_frame_is_closed_with_frame_timeout_in_its_framing() -> None:
    async def main() -> None:
        seen = Recorder()
        lobby = Lobby(LIMITS, seen.start, seen.close)
        ndjson, ndjson_peer = pair()
        lsp, lsp_peer = pair()
        lobby.admit(ndjson, "ndjson")
        lobby.admit(lsp, "lsp")
        ndjson_peer.sendall(b'  {"jsonrpc":')
        lsp_peer.sendall(b"Content-Len")
        await turns()
        lobby.sweep(time.monotonic() + LIMITS.frame_deadline * 0.99)
        assert len(lobby) == 2  # not before the deadline
        lobby.sweep(time.monotonic() + LIMITS.frame_deadline * (1 + DEADLINE_SPREAD))
        assert len(lobby) == 0 and sorted(seen.closed) == ["lsp", "ndjson"]
        line = read_to_eof(ndjson_peer)
        assert line.endswith(b"\n")
        assert json.loads(line)["error"]["data"]["name"] == "FRAME_TIMEOUT"
        framed = read_to_eof(lsp_peer)
        head, body = framed.split(b"\r\n\r\n", 1)
        assert head == f"Content-Length: {len(body)}".encode()
        assert json.loads(body)["error"]["data"]["name"] == "FRAME_TIMEOUT"

    anyio.run(main)


def test_a_silent_connection_is_closed_without_a_word_after_the_idle_timeout() -> None:
    async def main() -> None:
        seen = Recorder()
        lobby = Lobby(LIMITS, seen.start, seen.close)
        ours, theirs = pair()
        lobby.admit(ours, "silent")
        theirs.sendall(b"  ")  # blanks are no partial frame
        await turns()
        lobby.sweep(time.monotonic() + LIMITS.frame_deadline * 2)
        assert len(lobby) == 1  # the frame deadline does not apply
        lobby.sweep(time.monotonic() + LIMITS.idle_timeout * (1 + DEADLINE_SPREAD))
        assert seen.closed == ["silent"]
        assert read_to_eof(theirs) == b""

    anyio.run(main)
