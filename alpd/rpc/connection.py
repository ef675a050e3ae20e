"""One client connection: framing, dispatch, replies and notifications, every part bounded.

Frames are served inline, in order, by the reader: the common call (a ping, a list, a
pin) costs no task spawn and no queue hop, which is most of a round trip's price here.
A frame holding a *blocking* method (one that waits for a run to settle or for processes
to end) is served in its own task, at most `max_in_flight` at once, so the connection keeps
answering meanwhile. Replies are written under a lock; server notifications go through one
bounded queue drained by a writer task, and a subscriber whose queue fills is dropped. The
writer sends a notification only while the socket is writable (Linux: a quarter of the send
buffer or less in flight), so a subscriber that stops reading fills our queue rather than
the socket buffer, and its SUBSCRIBER_TOO_SLOW farewell still fits: it reads what was
queued, then the farewell, then EOF.

A partial frame must complete within `frame_deadline` seconds of its first byte
(slowloris; each connection's deadline falls at a random point up to half as long again,
so a crowd does not time out, and reconnect, all in one turn of the loop); the deadline is
per frame, not per read, so a byte a minute does not keep it alive. A connection that has
no partial frame, no subscription and no blocking call in flight is closed after
`idle_timeout` seconds of silence (spread the same way; clients reconnect; an idle crowd
must not hold the per-uid connection cap forever): one watchdog task per connection keeps
that deadline and the partial frame's, re-armed from the time the current wait began, so a
read costs a clock read rather than a cancel scope and a timer of its own (a fifth of a
ping; for a slowloris crowd, most of what its every byte cost). No failure of one
frame can end the daemon: anything unexpected is logged and answered with a bare -32603,
and anything that escapes a connection ends only that connection (`alpd.daemon`).
"""

from __future__ import annotations

import contextlib
import random
import time
from dataclasses import dataclass
from typing import Final

import anyio
import structlog
from anyio.abc import SocketAttribute, SocketStream, TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from alpd.events import MAX_PENDING, EventBus, Subscriber
from alpd.rpc.dispatch import Dispatcher
from alpd.rpc.socket_io import SocketIO
from alpd.services.context import Caller
from protocol import errors, jsonrpc
from protocol.framing import (
    DEFAULT_MAX_FRAME_BYTES,
    FrameDecoder,
    FrameTooLarge,
    Framing,
    FramingBroken,
    encode_frame,
    leading_id,
)

MAX_IN_FLIGHT: Final = 64
#: how far past its limit a connection's frame deadline and idle timeout may fall (see
#: `Connection.__init__`)
DEADLINE_SPREAD: Final = 0.5
READ_CHUNK: Final = 65536

log = structlog.get_logger("alpd.rpc")

_GONE = (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError)


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES
    frame_deadline: float = 10.0
    idle_timeout: float = 120.0
    max_in_flight: int = MAX_IN_FLIGHT
    max_outbound: int = MAX_PENDING


class InFlight:
    """How many requests the whole daemon is serving (shutdown waits for zero)."""

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0


def _named_error(name: str, message: str, id: jsonrpc.Id = None, **data: object) -> bytes:
    return jsonrpc.encode_error(id, errors.code_of(name), message, {"name": name, **data})


class Connection:
    """Serves one accepted stream until the peer leaves or the daemon stops."""

    #: what the daemon writes into `origin.door` for a run started on this connection
    door = "cli"

    def __init__(
        self,
        stream: SocketStream,
        caller: Caller,
        dispatcher: Dispatcher,
        events: EventBus,
        limits: ConnectionLimits,
        in_flight: InFlight,
    ) -> None:
        self.stream = stream
        self._io = SocketIO(stream.extra(SocketAttribute.raw_socket))
        self.caller = caller
        self._dispatcher = dispatcher
        self._events = events
        self._limits = limits
        self._decoder = FrameDecoder(limits.max_frame_bytes)
        self._blocking_slots = anyio.Semaphore(limits.max_in_flight)
        self._in_flight = in_flight
        self._send_lock = anyio.Lock()
        self._notify_send: MemoryObjectSendStream[bytes]
        self._notify_recv: MemoryObjectReceiveStream[bytes]
        self._notify_send, self._notify_recv = anyio.create_memory_object_stream[bytes](
            limits.max_outbound
        )
        self._subscriber: Subscriber | None = None
        self._tg: TaskGroup | None = None
        self._farewell: bytes | None = None
        #: when the partial frame in the decoder began (time.monotonic), None if there is none
        self._partial_since: float | None = None
        self._frame_timed_out = False
        #: the watchdog's sleep, to wake it when a partial frame begins
        self._nap: anyio.CancelScope | None = None
        self._blocking = 0
        self._preloaded = False
        #: when the current wait for a frame began (time.monotonic), None while not waiting
        self._waiting_since: float | None = None
        # Deadlines spread over [1, 1 + SPREAD) times the limit, per connection: a crowd that
        # connected at once would otherwise time out at once, and a thousand closes (and the
        # crowd's thousand reconnections) in one turn of the loop held the owner's ping for
        # 50-80 ms (bench/bench_slowloris.py).
        spread = 1.0 + DEADLINE_SPREAD * random.random()
        self._frame_deadline = limits.frame_deadline * spread
        self._idle_timeout = limits.idle_timeout * spread

    # Session protocol (what handlers see)

    def subscribe(self, methods: frozenset[str] | None, thread_id: str | None) -> None:
        if self._subscriber is not None:
            self._events.remove(self._subscriber)
        self._subscriber = Subscriber(self._notify_send, methods, thread_id, self._drop_slow)
        self._events.add(self._subscriber)

    def _drop_slow(self) -> None:
        self._farewell = _named_error(
            "SUBSCRIBER_TOO_SLOW",
            f"more than {self._limits.max_outbound} notifications were waiting; resubscribe "
            "and read them as they come",
        )
        if self._tg is not None:
            self._tg.cancel_scope.cancel()

    async def serve(self) -> None:
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                tg.start_soon(self._notification_loop)
                with anyio.CancelScope() as reading:
                    tg.start_soon(self._watch, reading)
                    await self._read_loop(tg)
                if self._frame_timed_out:
                    await self._send_now(_named_error("FRAME_TIMEOUT", "a partial message stalled"))
                # The peer finished sending: let blocking calls finish, then stop.
                for _ in range(self._limits.max_in_flight):
                    await self._blocking_slots.acquire()
                tg.cancel_scope.cancel()
        finally:
            if self._subscriber is not None:
                self._events.remove(self._subscriber)
            if self._farewell is not None:
                await self._send_now(self._farewell)
            self._io.close()
            with anyio.CancelScope(shield=True):
                await self.stream.aclose()

    async def _receive(self) -> bytes | None:
        """The next chunk; None when the peer is gone. A stalled partial frame or a silence
        too long is `_watch`'s to end (it cancels the read)."""
        try:
            if not self._decoder.has_partial_frame:
                self._partial_since = None
                return await self._receive_between_frames()
            # Per frame, not per read: the clock runs from the frame's first byte and is
            # reset only when a frame completes. A plain read: the deadline is the watchdog's
            # (a cancel scope and a timer per read cost a slowloris crowd's every byte).
            if self._partial_since is None:
                self._partial_since = time.monotonic()
                if self._nap is not None:
                    self._nap.cancel()  # the watchdog sleeps for the idle timeout: wake it
            return await self._io.receive(READ_CHUNK)
        except _GONE:
            return None

    async def _receive_between_frames(self) -> bytes:
        """The next chunk; `_watch` ends the wait once the connection is idle too long."""
        self._waiting_since = time.monotonic()
        try:
            return await self._io.receive(READ_CHUNK)
        finally:
            self._waiting_since = None

    async def _watch(self, reading: anyio.CancelScope) -> None:
        """Cancel `reading` once a partial frame has waited `frame_deadline` since its first
        byte (saying FRAME_TIMEOUT), or once a wait for a frame has lasted `idle_timeout`
        while nothing (a subscription, a blocking call) keeps the connection. One task per
        connection, asleep until the nearer deadline; a read costs a clock read."""
        while True:
            now = time.monotonic()
            if self._partial_since is not None:
                left = self._partial_since + self._frame_deadline - now
                if left <= 0:
                    log.warning("frame_timeout", uid=self.caller.uid, pid=self.caller.pid)
                    self._frame_timed_out = True
                    reading.cancel()
                    return
            elif (since := self._waiting_since) is None:
                left = self._idle_timeout
            else:
                left = since + self._idle_timeout - now
                if left <= 0:
                    if self._subscriber is None and self._blocking == 0:
                        log.info("connection_idle", uid=self.caller.uid, pid=self.caller.pid)
                        reading.cancel()
                        return
                    self._waiting_since = now  # kept: a new idle period begins
                    continue
            with anyio.CancelScope() as nap:
                self._nap = nap
                await anyio.sleep(left)
            self._nap = None

    def preload(self, data: bytes, partial_since: float | None) -> None:
        """What the lobby read before this connection was served (`alpd.rpc.lobby`), and
        when its partial frame began: served first, the frame's deadline kept."""
        self._decoder.feed(data)
        self._partial_since = partial_since
        self._preloaded = bool(data)

    async def _read_loop(self, tg: TaskGroup) -> None:
        if self._preloaded and not await self._drain_frames(tg):
            return
        while True:
            data = await self._receive()
            if data is None:
                return
            self._decoder.feed(data)
            if not await self._drain_frames(tg):
                return

    async def _drain_frames(self, tg: TaskGroup) -> bool:
        while True:
            try:
                frame = self._decoder.next_frame()
            except FrameTooLarge as exc:
                # Answered with the request's id when its head holds one, so a client
                # waiting on that id gets its answer; else the connection closes after the
                # error, so such a client fails at once rather than waiting forever.
                found, request_id = leading_id(exc.head)
                log.warning("frame_too_large", size=exc.size, limit=exc.limit, id_found=found)
                refusal = _named_error(
                    "FRAME_TOO_LARGE",
                    f"{exc}; send large content as a file path, or split it"
                    + ("" if found else "; its id could not be read, so the connection closes"),
                    request_id,
                    limit=exc.limit,
                    size=exc.size,
                )
                if found:
                    await self._write(refusal)
                    continue
                await self._send_now(refusal)
                return False
            except FramingBroken as exc:
                log.warning("protocol_error", error=str(exc))
                await self._send_now(jsonrpc.encode_error(None, errors.PARSE_ERROR, str(exc)))
                return False
            if frame is None:
                return True
            self._partial_since = None
            items, is_batch, blocking = self._dispatcher.parse(frame)
            if blocking:
                await self._blocking_slots.acquire()
                self._blocking += 1
                tg.start_soon(self._serve_blocking, items, is_batch)
            else:
                await self._serve(items, is_batch)

    async def _serve(self, items: list[jsonrpc.Parsed], is_batch: bool) -> None:
        self._in_flight.count += 1
        try:
            reply = await self._dispatcher.handle_parsed(self, items, is_batch)
        except Exception:
            log.exception("frame_failed")
            reply = jsonrpc.encode_error(None, errors.INTERNAL_ERROR, "Internal error")
        finally:
            self._in_flight.count -= 1
        if reply is not None:
            await self._write(reply)

    async def _serve_blocking(self, items: list[jsonrpc.Parsed], is_batch: bool) -> None:
        try:
            await self._serve(items, is_batch)
        finally:
            self._blocking -= 1
            self._blocking_slots.release()

    async def _write(self, payload: bytes) -> None:
        frame = encode_frame(self._decoder.framing or Framing.NDJSON, payload)
        with contextlib.suppress(*_GONE):
            if self._subscriber is None and self._blocking == 0:
                # Only the reader task writes (it alone creates other writers, and it is
                # busy here), so the lock — 8% of a ping — is not needed.
                await self._io.send(frame)
                return
            async with self._send_lock:
                await self._io.send(frame)

    async def _notification_loop(self) -> None:
        async with self._notify_recv:
            async for payload in self._notify_recv:
                await self._write_notification(payload)

    async def _write_notification(self, payload: bytes) -> None:
        """Written only while the socket is writable, so notifications never fill its buffer:
        a reply, and the SUBSCRIBER_TOO_SLOW farewell of a subscriber that stopped reading,
        always find room behind them."""
        frame = encode_frame(self._decoder.framing or Framing.NDJSON, payload)
        with contextlib.suppress(*_GONE):
            async with self._send_lock:
                await self._io.wait_writable()
                await self._io.send(frame)

    async def _send_now(self, payload: bytes) -> None:
        """A last message before closing: shielded from our own cancellation, at most 1 s."""
        framing = self._decoder.framing or Framing.NDJSON
        with (
            anyio.CancelScope(shield=True),
            anyio.move_on_after(1),
            contextlib.suppress(*_GONE),
        ):
            await self._io.send(encode_frame(framing, payload))
