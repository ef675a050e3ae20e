"""The web port's connections, bounded: another local user needs no token to connect.

uvicorn alone let a crowd of idle TCP connections (no byte sent) pile up until alpd ran out
of descriptors, and the owner's CLI, on the Unix socket, timed out; and a crowd of slow
requests (a header byte now and then) held its `limit_concurrency` slots so that every page
was 503. `GuardedH11Protocol` is uvicorn's h11 protocol with three rules:

- **A request must arrive whole in time.** From the connection's start, and again from the
  end of each response (keep-alive), the client has `REQUEST_DEADLINE` seconds to send the
  whole request (head and body); else the connection is closed. A byte now and then does not
  extend it (the deadline is per request, not per read).
- **At most `cap` connections.** Over the cap, the connection that has waited longest for its
  request to arrive is closed to make room; a connection whose request has arrived (the
  owner's page being rendered, the owner's `/events` stream) is never taken. A crowd can thus
  only cycle through the slots it shares with itself: a browser sends its request right after
  connecting and gets in. If every connection is in a request already, the new one is closed.
- **The cap stays well below the descriptor limit** (`web_cap`), leaving the Unix socket's
  connections and the daemon's own files their share.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Any, Final

import h11
import structlog
from uvicorn.protocols.http.h11_impl import H11Protocol

#: seconds for a whole request to arrive (from the connect, or from the previous response)
REQUEST_DEADLINE: Final = 10.0
#: the most web connections at once, whatever the descriptor limit
WEB_MAX_CONNECTIONS: Final = 64
#: at least this many, however low the limit
WEB_MIN_CONNECTIONS: Final = 8

log = structlog.get_logger("alpd.web")


def web_cap(fd_limit: int, fd_reserve: int) -> int:
    """How many web connections at once under a soft RLIMIT_NOFILE of `fd_limit`: at most an
    eighth of what `fd_reserve` leaves, and at most WEB_MAX_CONNECTIONS."""
    return max(WEB_MIN_CONNECTIONS, min(WEB_MAX_CONNECTIONS, (fd_limit - fd_reserve) // 8))


class ConnectionGuard:
    """The web connections of one server: which are still waiting for their request."""

    def __init__(self, cap: int, deadline: float = REQUEST_DEADLINE) -> None:
        self.cap = cap
        self.deadline = deadline
        self.open: set[GuardedH11Protocol] = set()
        #: connections whose request has not fully arrived, oldest first
        self.waiting: OrderedDict[GuardedH11Protocol, None] = OrderedDict()
        self.evicted = 0
        self.timed_out = 0

    def admit(self, conn: GuardedH11Protocol) -> bool:
        """Room for `conn` (already counted in `open`), closing the longest waiter if need be;
        False when every other connection is in a request already."""
        if len(self.open) <= self.cap:
            return True
        for victim in self.waiting:
            if victim is not conn:
                self.evicted += 1
                if self.evicted in (1, 100) or self.evicted % 1000 == 0:
                    log.warning("web_connection_evicted", total=self.evicted, cap=self.cap)
                victim.close_now()
                return True
        return False


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol under a `ConnectionGuard` (see the module)."""

    guard: ConnectionGuard  # set on the subclass made for one server (`guarded_protocol`)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.guard.open.add(self)
        self._await_request()
        if not self.guard.admit(self):
            self.close_now()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        self.guard.open.discard(self)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        # The whole request is in (h11 moved the client past its body): no deadline while
        # it is served; a new one starts when the response is complete.
        if self.conn.their_state in (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR):
            self._stop_waiting()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._await_request()

    def close_now(self) -> None:
        self._stop_waiting()
        if not self.transport.is_closing():
            self.transport.close()

    def _await_request(self) -> None:
        self._stop_waiting()
        self.guard.waiting[self] = None
        self._deadline = self.loop.call_later(self.guard.deadline, self._too_slow)

    def _stop_waiting(self) -> None:
        self.guard.waiting.pop(self, None)
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        self.guard.timed_out += 1
        self.close_now()


def guarded_protocol(guard: ConnectionGuard) -> type[GuardedH11Protocol]:
    """The protocol class for one server, bound to its guard."""
    return type("GuardedH11Protocol", (GuardedH11Protocol,), {"guard": guard})
