"""`/events`: the daemon's notifications as server-sent events, for the page to stay current.

Each subscriber is the event bus's own (alpd.events): a bounded queue of `MAX_PENDING`
frames; a browser that falls that far behind is dropped, its stream ends, and EventSource
reconnects after `RETRY_MS` (the script then re-reads the page, so nothing is missed for
long). A comment line every `KEEPALIVE_SECONDS` keeps proxies and the browser content and
finds a stream whose reader left (the write fails, the stream ends). `?thread=ID` narrows
the stream to one thread's notifications. The data of each event is the JSON-RPC
notification exactly as a socket subscriber gets it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Final

import anyio
from anyio.streams.memory import MemoryObjectSendStream
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from alpd.events import EventBus, Subscriber
from protocol import messages as m

MAX_PENDING: Final = 256
KEEPALIVE_SECONDS: Final = 15.0
RETRY_MS: Final = 2000
#: history/progress is per-entry chatter of an import: the page has nothing to redraw for it
STREAMED: Final = frozenset(m.NOTIFICATIONS) - {"history/progress"}


def sse_event(frame: bytes) -> bytes:
    """One `data:` event; a JSON-RPC frame has no raw newline, but split on any to be sure."""
    lines = frame.splitlines() or [b""]
    return b"".join(b"data: " + line + b"\n" for line in lines) + b"\n"


class EventStreams:
    """The `/events` endpoint and the streams it has open; `close_all` ends every one of them
    (the daemon is stopping: each response finishes, so the server can shut down without
    cancelling a request in the middle)."""

    def __init__(self, bus: EventBus) -> None:
        self._bus = bus
        self._open: set[MemoryObjectSendStream[bytes]] = set()

    def __len__(self) -> int:
        return len(self._open)

    def close_all(self) -> None:
        for send in list(self._open):
            send.close()

    async def endpoint(self, request: Request) -> Response:
        thread_id = request.query_params.get("thread") or None
        send, receive = anyio.create_memory_object_stream[bytes](MAX_PENDING)
        subscriber = Subscriber(send, STREAMED, thread_id, send.close)
        self._bus.add(subscriber)
        self._open.add(send)

        async def body() -> AsyncIterator[bytes]:
            try:
                yield f"retry: {RETRY_MS}\n: streaming\n\n".encode()
                while True:
                    frame: bytes | None = None
                    # never yield inside the cancel scope: the generator is resumed from
                    # Starlette's task, outside it
                    with anyio.move_on_after(KEEPALIVE_SECONDS):
                        frame = await receive.receive()
                    yield b": keepalive\n\n" if frame is None else sse_event(frame)
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                return
            finally:
                self._bus.remove(subscriber)
                self._open.discard(send)
                receive.close()

        return StreamingResponse(body(), media_type="text/event-stream")
