"""Two real alpd (two homes, two host ids) on ONE database, SQLite's file or PostgreSQL's
(tests/integration/hosts/conftest.py): a thread made on A is listed and shown on B with A's
host; kill -9 A while its root runs → once A's lease has expired B settles that root
`interrupted` without signalling its process (which still runs) and fires A's schedule; A
restarted finds its lease lost, says HOST_LEASE_LOST, refuses a late settle of the taken root
by that name, and goes on with a fresh lease (docs/many-machines.md)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from daemons import BLOCKER, start_headless
from polling import wait_for

from alpctl.client import RpcError
from alpd.testing.daemon import DaemonProcess

pytestmark = pytest.mark.both_stores


def show(d: DaemonProcess, execution_id: str) -> dict[str, Any]:
    shown = d.call("execution/show", {"executionId": execution_id})
    assert isinstance(shown, dict)
    return shown


def host_id(d: DaemonProcess) -> str:
    """The host's id, once it has registered (it does before it serves)."""
    path = d.home / "host-id"
    wait_for(path.exists, what="the host's id")
    return path.read_text().strip()


def ticks(work: Path) -> int:
    path = work / "ticks"
    return path.read_text().count("\n") if path.exists() else 0


def last_root(d: DaemonProcess, thread_id: str) -> dict[str, Any]:
    shown = d.call("thread/show", {"threadId": thread_id})
    assert isinstance(shown, dict)
    return dict(shown["roots"][-1])


def test_a_host_taken_over_after_kill_9(
    hosts: tuple[DaemonProcess, DaemonProcess], tmp_path: Path
) -> None:
    a, b = hosts
    work = tmp_path / "work"
    work.mkdir()
    host_a, host_b = (host_id(d) for d in (a, b))
    assert host_a.startswith("host_") and host_b.startswith("host_") and host_a != host_b

    # made on A, seen on B, with the host that runs it
    thread_id = a.call("thread/create", {"title": "shared", "cwd": str(work)})["id"]  # type: ignore[index]
    listed = b.call("thread/list", {"all": True})
    assert thread_id in [t["id"] for t in listed["threads"]]  # type: ignore[index]
    root = start_headless(a, thread_id, work, BLOCKER)
    wait_for(lambda: show(a, root["id"])["status"] == "running", what="A's root to run")
    seen = show(b, root["id"])
    assert (seen["hostId"], seen["hostName"], seen["status"]) == (host_a, "host-a", "running")
    ps = b.cli("ps")
    assert ps.returncode == 0 and "@host-a" in ps.stdout, (ps.stdout, ps.stderr)
    shown = b.cli("execution", "show", root["id"])
    assert shown.returncode == 0 and f"host host-a ({host_a})" in shown.stdout, shown.stdout
    # B neither settles nor cancels a root A runs while A's lease lives
    with pytest.raises(RpcError) as elsewhere:
        b.call("execution/cancel", {"executionId": root["id"]})
    assert elsewhere.value.name == "HOST_NOT_OWNER" and elsewhere.value.code == 1151
    assert "host-a" in elsewhere.value.message
    with pytest.raises(RpcError) as settle_elsewhere:
        b.call("execution/settle", {"executionId": root["id"], "outcome": "completed"})
    assert settle_elsewhere.value.name == "HOST_NOT_OWNER"
    # A's schedule (every second): it fires on A while A lives
    nightly = a.call("thread/create", {"title": "nightly", "cwd": str(work)})["id"]  # type: ignore[index]
    a.call("schedule/create", {"threadId": nightly, "prompt": "t", "agent": "tick", "every": "1s"})
    wait_for(lambda: ticks(work) >= 1, what="A's schedule to fire on A", timeout=20)
    assert last_root(a, nightly)["hostId"] == host_a

    pid = show(a, root["id"])["pid"]
    a.kill9()
    # after A's lease (3 s) expires, B takes A over: the root interrupted, never signalled
    wait_for(lambda: show(b, root["id"])["status"] == "settled", what="B to settle", timeout=30)
    taken = show(b, root["id"])
    assert (taken["outcome"], taken["settledBy"], taken["hostId"]) == (
        "interrupted",
        host_b,
        host_a,
    )
    os.kill(pid, 0)  # A's run still runs: B never signalled it
    assert "host_taken_over" in b.log_text()
    # A's schedule now fires on B
    wait_for(
        lambda: last_root(b, nightly)["hostId"] == host_b,
        what="A's schedule to fire on B",
        timeout=20,
    )

    # A back: its lease was lost; it says so and refuses a late settle of its taken root
    a.start()
    wait_for(lambda: "host_lease_lost" in a.log_text(), what="A to say HOST_LEASE_LOST")
    with pytest.raises(RpcError) as late:
        a.call("execution/settle", {"executionId": root["id"], "outcome": "completed"})
    assert late.value.name == "HOST_LEASE_LOST" and late.value.code == 1150
    assert "continue the thread" in late.value.message
    services = a.call("daemon/ps", {})["services"]  # type: ignore[index]
    hosts_task = next(s for s in services if s["name"] == "hosts")
    assert "HOST_LEASE_LOST" in hosts_task["detail"], hosts_task
    # ... and goes on with a fresh lease: a new root runs on A and A settles it
    (work / "release").touch()
    again = start_headless(a, thread_id, work, ["true"])
    wait_for(lambda: show(a, again["id"])["status"] == "settled", what="the new root on A")
    after = show(a, again["id"])
    assert (after["outcome"], after["hostId"], after["settledBy"]) == (
        "completed",
        host_a,
        host_a,
    )
    # the schedule stays with B: A takes nothing back
    count = ticks(work)
    wait_for(lambda: ticks(work) > count + 1, what="two more fires", timeout=20)
    assert last_root(a, nightly)["hostId"] == host_b


def test_a_stopped_host_finds_its_lease_lost_and_leaves_what_was_taken(
    hosts: tuple[DaemonProcess, DaemonProcess], tmp_path: Path
) -> None:
    """SIGSTOP A (a suspended laptop, a long pause) while its root runs: B takes A over;
    A, continued, finds its lease lost at its next renewal and says so; when the run it was
    watching ends, its result is not recorded (the root stays as B settled it)."""
    a, b = hosts
    work = tmp_path / "work"
    work.mkdir()
    host_a, host_b = (host_id(d) for d in (a, b))
    thread_id = a.call("thread/create", {"title": "paused", "cwd": str(work)})["id"]  # type: ignore[index]
    root = start_headless(a, thread_id, work, BLOCKER)
    wait_for(lambda: show(a, root["id"])["status"] == "running", what="A's root to run")
    os.kill(a.pid, signal.SIGSTOP)
    try:
        wait_for(lambda: show(b, root["id"])["status"] == "settled", what="B to settle", timeout=30)
    finally:
        os.kill(a.pid, signal.SIGCONT)
    taken = show(b, root["id"])
    assert (taken["outcome"], taken["settledBy"], taken["hostId"]) == (
        "interrupted",
        host_b,
        host_a,
    )
    wait_for(lambda: "host_lease_lost" in a.log_text(), what="A to find its lease lost")
    (work / "release").touch()  # the run A watched ends: A does not record it
    wait_for(lambda: not _alive(taken["pid"]), what="the run to end")
    time.sleep(1.0)
    after = show(a, root["id"])
    assert (after["outcome"], after["settledBy"], after.get("exitCode")) == (
        "interrupted",
        host_b,
        None,
    )
    # A goes on: a new root of the thread runs on A
    again = start_headless(a, thread_id, work, ["true"])
    wait_for(lambda: show(a, again["id"])["status"] == "settled", what="the new root on A")
    assert show(b, again["id"])["hostId"] == host_a


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
