"""One client connection: credentials at accept, framing, bounded in-flight work, replies.

The reader feeds a `FrameDecoder`; each complete frame is handled in its own task (at most
`MAX_IN_FLIGHT` at once, so a client cannot make us hold unbounded work), and replies and
notifications leave through one bounded outbound queue drained by a writer task. A partial
frame must complete within `frame_deadline` seconds of its first byte (slowloris); the
deadline is per frame, not per read, so a byte a minute does not keep it alive.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from typing import Final

import anyio
import structlog
from anyio.abc import SocketStream, TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from alpd.events import MAX_PENDING, EventBus, Subscriber
from alpd.rpc.dispatch import Dispatcher
from alpd.services.context import Caller
from protocol import errors, jsonrpc
from protocol.framing import (
    DEFAULT_MAX_FRAME_BYTES,
    FrameDecoder,
    FrameTooLarge,
    Framing,
    FramingBroken,
    encode_frame,
)

MAX_IN_FLIGHT: Final = 64
READ_CHUNK: Final = 65536

log = structlog.get_logger("alpd.rpc")


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES
    frame_deadline: float = 10.0
    max_in_flight: int = MAX_IN_FLIGHT
    max_outbound: int = MAX_PENDING


def _named_error(name: str, message: str, **data: object) -> bytes:
    return jsonrpc.encode_error(None, errors.code_of(name), message, {"name": name, **data})


class Connection:
    """Serves one accepted stream until the peer leaves or the daemon stops."""

    def __init__(
        self,
        stream: SocketStream,
        caller: Caller,
        dispatcher: Dispatcher,
        events: EventBus,
        limits: ConnectionLimits,
        in_flight: anyio.CapacityLimiter,
    ) -> None:
        self.stream = stream
        self.caller = caller
        self._dispatcher = dispatcher
        self._events = events
        self._limits = limits
        self._decoder = FrameDecoder(limits.max_frame_bytes)
        self._slots = anyio.Semaphore(limits.max_in_flight)
        self._daemon_in_flight = in_flight
        self._out_send: MemoryObjectSendStream[bytes]
        self._out_recv: MemoryObjectReceiveStream[bytes]
        self._out_send, self._out_recv = anyio.create_memory_object_stream[bytes](
            limits.max_outbound
        )
        self._subscriber: Subscriber | None = None
        self._tg: TaskGroup | None = None

    # Session protocol (what handlers see)

    def subscribe(self, methods: frozenset[str] | None, thread_id: str | None) -> None:
        if self._subscriber is not None:
            self._events.remove(self._subscriber)
        self._subscriber = Subscriber(self._out_send, methods, thread_id, self._drop_slow)
        self._events.add(self._subscriber)

    def _drop_slow(self) -> None:
        if self._tg is not None:
            self._tg.cancel_scope.cancel()

    async def serve(self) -> None:
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                tg.start_soon(self._write_loop)
                await self._read_loop(tg)
                # The peer finished sending: let in-flight replies drain, then stop writing.
                for _ in range(self._limits.max_in_flight):
                    await self._slots.acquire()
                self._out_send.close()
        finally:
            if self._subscriber is not None:
                self._events.remove(self._subscriber)
            with anyio.CancelScope(shield=True):
                await self.stream.aclose()

    async def _read_loop(self, tg: TaskGroup) -> None:
        partial_since: float | None = None
        while True:
            if self._decoder.has_partial_frame:
                partial_since = partial_since or anyio.current_time()
                remaining = partial_since + self._limits.frame_deadline - anyio.current_time()
            else:
                partial_since, remaining = None, math.inf
            try:
                with anyio.fail_after(max(remaining, 0)):
                    data = await self.stream.receive(READ_CHUNK)
            except TimeoutError:
                log.warning("frame_timeout", uid=self.caller.uid, pid=self.caller.pid)
                await self._send_now(_named_error("FRAME_TIMEOUT", "a partial message stalled"))
                return
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                return
            self._decoder.feed(data)
            if not await self._drain_frames(tg):
                return

    async def _drain_frames(self, tg: TaskGroup) -> bool:
        while True:
            try:
                frame = self._decoder.next_frame()
            except FrameTooLarge as exc:
                log.warning("frame_too_large", size=exc.size, limit=exc.limit)
                await self._out_send.send(
                    _named_error("FRAME_TOO_LARGE", str(exc), limit=exc.limit)
                )
                continue
            except FramingBroken as exc:
                log.warning("protocol_error", error=str(exc))
                await self._send_now(jsonrpc.encode_error(None, errors.PARSE_ERROR, str(exc)))
                return False
            if frame is None:
                return True
            await self._slots.acquire()
            tg.start_soon(self._handle, frame)

    async def _handle(self, frame: bytes) -> None:
        try:
            async with self._daemon_in_flight:
                reply = await self._dispatcher.handle_frame(self, frame)
            if reply is not None:
                with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                    await self._out_send.send(reply)
        finally:
            self._slots.release()

    async def _write_loop(self) -> None:
        async with self._out_recv:
            async for payload in self._out_recv:
                framing = self._decoder.framing or Framing.NDJSON
                try:
                    await self.stream.send(encode_frame(framing, payload))
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    if self._tg is not None:
                        self._tg.cancel_scope.cancel()
                    return

    async def _send_now(self, payload: bytes) -> None:
        """A last message before closing: written directly, bounded in time."""
        framing = self._decoder.framing or Framing.NDJSON
        # Shield from the connection's own cancellation, but never wait more than a second.
        with (
            anyio.CancelScope(shield=True),
            anyio.move_on_after(1),
            contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError),
        ):
            await self.stream.send(encode_frame(framing, payload))
