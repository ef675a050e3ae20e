"""Thread leases and graph leases, and the rule that one task never holds both (invariant 9).

A thread lease serialises the use cases that move a thread (continue, settle of a root,
reconcile); a graph lease serialises those that walk one root's delegation graph (delegate,
cancel). Holding both at once is how a cancel cascading down a graph and a settle projecting
into a thread could wait on each other; so it is refused outright, not merely avoided.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from contextvars import ContextVar

import anyio

_held: ContextVar[tuple[str, ...]] = ContextVar("alp_leases_held", default=())


class LeaseOrderViolation(RuntimeError):
    """A task asked for a thread lease while holding a graph lease, or the reverse."""


class Leases:
    def __init__(self) -> None:
        self._locks: dict[str, anyio.Lock] = {}

    def held(self) -> tuple[str, ...]:
        return _held.get()

    @asynccontextmanager
    async def _lease(self, key: str, forbidden: str) -> AsyncIterator[None]:
        held = _held.get()
        if any(name.startswith(forbidden) for name in held):
            raise LeaseOrderViolation(f"{key} requested while holding {held}")
        lock = self._locks.setdefault(key, anyio.Lock())
        async with lock:
            token = _held.set((*held, key))
            try:
                yield
            finally:
                _held.reset(token)
                if not lock.statistics().tasks_waiting:
                    self._locks.pop(key, None)

    def thread(self, thread_id: str) -> AbstractAsyncContextManager[None]:
        return self._lease(f"thread:{thread_id}", "graph:")

    def graph(self, root_id: str) -> AbstractAsyncContextManager[None]:
        return self._lease(f"graph:{root_id}", "thread:")
