"""Thread and graph leases (alpd/services/runs/leases.py): docs/contract.md, invariant 9.

A thread lease and a graph lease are never held together by one task; the same lease
serialises the tasks that ask for it; different leases do not wait on each other.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import pytest

from alpd.services.runs.leases import LeaseOrderViolation, Leases


def run(fn: Callable[[], Awaitable[None]]) -> None:
    anyio.run(fn)


def test_thread_and_graph_lease_never_held_together_graph_inside_thread() -> None:
    async def main() -> None:
        leases = Leases()
        async with leases.thread("thread_a"):
            with pytest.raises(LeaseOrderViolation):
                async with leases.graph("exec_root"):
                    pytest.fail("a graph lease was granted under a thread lease")
            # The refused request left nothing behind: the thread lease is still ours alone.
            assert leases.held() == ("thread:thread_a",)
        assert leases.held() == ()

    run(main)


def test_thread_and_graph_lease_never_held_together_thread_inside_graph() -> None:
    async def main() -> None:
        leases = Leases()
        async with leases.graph("exec_root"):
            with pytest.raises(LeaseOrderViolation):
                async with leases.thread("thread_a"):
                    pytest.fail("a thread lease was granted under a graph lease")
            assert leases.held() == ("graph:exec_root",)
        assert leases.held() == ()

    run(main)


def test_taking_them_one_after_the_other_is_allowed() -> None:
    held: list[tuple[str, ...]] = []

    async def main() -> None:
        leases = Leases()
        async with leases.graph("exec_root"):
            held.append(leases.held())
        async with leases.thread("thread_a"):
            held.append(leases.held())
        async with leases.graph("exec_root"):
            held.append(leases.held())
        held.append(leases.held())

    run(main)
    assert held == [("graph:exec_root",), ("thread:thread_a",), ("graph:exec_root",), ()]


def test_same_lease_serialises_two_tasks() -> None:
    events: list[str] = []

    async def holder(leases: Leases, name: str, key: str, kind: str) -> None:
        lease = leases.thread(key) if kind == "thread" else leases.graph(key)
        async with lease:
            events.append(f"{name}+")
            await anyio.sleep(0.05)
            events.append(f"{name}-")

    async def main() -> None:
        for kind in ("thread", "graph"):
            events.clear()
            leases = Leases()
            async with anyio.create_task_group() as tg:
                tg.start_soon(holder, leases, "a", "same", kind)
                await anyio.sleep(0.01)
                tg.start_soon(holder, leases, "b", "same", kind)
            assert events == ["a+", "a-", "b+", "b-"], kind
            # Once both are done the lock table is empty again (no leak per key).
            assert leases._locks == {}

    run(main)


def test_different_leases_do_not_serialise() -> None:
    events: list[str] = []

    async def holder(leases: Leases, name: str, key: str) -> None:
        async with leases.thread(key):
            events.append(f"{name}+")
            await anyio.sleep(0.05)
            events.append(f"{name}-")

    async def main() -> None:
        leases = Leases()
        async with anyio.create_task_group() as tg:
            tg.start_soon(holder, leases, "a", "thread_a")
            await anyio.sleep(0.01)
            tg.start_soon(holder, leases, "b", "thread_b")
        assert events == ["a+", "b+", "a-", "b-"]

    run(main)


def test_a_task_started_under_a_lease_does_not_hold_it() -> None:
    """A lease belongs to the task that took it. A task started while it is held (e.g. the
    supervisor's watcher, spawned by `delegate` under the graph lease) holds nothing, and
    must be free to take a thread lease once the lease is released."""
    outcome: list[object] = []

    async def main() -> None:
        leases = Leases()
        released = anyio.Event()

        async def watcher() -> None:
            await released.wait()
            try:
                async with leases.thread("thread_a"):
                    outcome.append(leases.held())
            except LeaseOrderViolation as exc:
                outcome.append(exc)

        async with anyio.create_task_group() as tg:
            async with leases.graph("exec_root"):
                tg.start_soon(watcher)
                await anyio.sleep(0.01)
            released.set()
        assert outcome == [("thread:thread_a",)]

    run(main)
