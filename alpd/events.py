"""Server notifications fanned out to subscribers, each through a bounded queue.

A subscriber that does not keep up is dropped (its connection is told why and closed),
never buffered without bound: geth closes a subscriber at 10k pending notifications, we
at `MAX_PENDING`.

On a PostgreSQL store the bus also tells other hosts (`forward`, set by
`alpd.background.event_relay`), and publishes what they tell it with `forward=False`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import anyio
import structlog
from anyio.streams.memory import MemoryObjectSendStream

MAX_PENDING: Final = 1024

log = structlog.get_logger("alpd.events")


class Subscriber:
    def __init__(
        self,
        send: MemoryObjectSendStream[bytes],
        methods: frozenset[str] | None,
        thread_id: str | None,
        on_overflow: Callable[[], None],
    ) -> None:
        self.send = send
        self.methods = methods
        self.thread_id = thread_id
        self.on_overflow = on_overflow

    def wants(self, method: str, thread_id: str | None) -> bool:
        if self.methods is not None and method not in self.methods:
            return False
        return self.thread_id is None or self.thread_id == thread_id


class EventBus:
    def __init__(self) -> None:
        self._subscribers: set[Subscriber] = set()
        #: given every notification published here (not one received from another host)
        self.forward: Callable[[str, bytes], None] | None = None

    def add(self, subscriber: Subscriber) -> None:
        self._subscribers.add(subscriber)

    def remove(self, subscriber: Subscriber) -> None:
        self._subscribers.discard(subscriber)

    def __len__(self) -> int:
        return len(self._subscribers)

    def wanted(self, method: str, thread_id: str | None) -> bool:
        """Whether a subscriber would get this notification (to skip building one nobody
        reads); `thread_id` None: of any thread."""
        return any(
            s.wants(method, thread_id if s.thread_id is not None and thread_id else s.thread_id)
            for s in self._subscribers
        )

    def publish(
        self, method: str, frame: bytes, thread_id: str | None, *, forward: bool = True
    ) -> None:
        """Queue an encoded notification frame to every interested subscriber, and (unless
        `forward` is False: it came from another host) hand it to `self.forward`."""
        if forward and self.forward is not None:
            self.forward(method, frame)
        for subscriber in list(self._subscribers):
            if not subscriber.wants(method, thread_id):
                continue
            try:
                subscriber.send.send_nowait(frame)
            except anyio.WouldBlock:
                log.warning("subscriber_dropped", reason="SUBSCRIBER_TOO_SLOW", pending=MAX_PENDING)
                self.remove(subscriber)
                subscriber.on_overflow()
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                self.remove(subscriber)
