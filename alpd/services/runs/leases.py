"""Thread leases and graph leases, and the rule that one task never holds both (invariant 9).

A thread lease serialises the use cases that move a thread (continue, settle of a root,
reconcile); a graph lease serialises those that walk one root's delegation graph (delegate,
cancel). Holding both at once is how a cancel cascading down a graph and a settle projecting
into a thread could wait on each other; so it is refused outright, not merely avoided.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import anyio


class LeaseOrderViolation(RuntimeError):
    """A task asked for a thread lease while holding a graph lease, or the reverse."""


class Leases:
    def __init__(self) -> None:
        self._locks: dict[str, anyio.Lock] = {}
        # Keyed by task, not a ContextVar: a task started while a lease is held must not
        # inherit it (a watcher spawned under a graph lease would "hold" it forever).
        self._held: dict[int, tuple[str, ...]] = {}

    def held(self) -> tuple[str, ...]:
        return self._held.get(anyio.get_current_task().id, ())

    @asynccontextmanager
    async def _lease(self, key: str, forbidden: str) -> AsyncIterator[None]:
        task = anyio.get_current_task().id
        held = self._held.get(task, ())
        if any(name.startswith(forbidden) for name in held):
            raise LeaseOrderViolation(f"{key} requested while holding {held}")
        lock = self._locks.setdefault(key, anyio.Lock())
        async with lock:
            self._held[task] = (*held, key)
            try:
                yield
            finally:
                if held:
                    self._held[task] = held
                else:
                    self._held.pop(task, None)
                if not lock.statistics().tasks_waiting:
                    self._locks.pop(key, None)

    def thread(self, thread_id: str) -> AbstractAsyncContextManager[None]:
        return self._lease(f"thread:{thread_id}", "graph:")

    def graph(self, root_id: str) -> AbstractAsyncContextManager[None]:
        return self._lease(f"graph:{root_id}", "thread:")
