"""`execution/attach` takes only a process the caller started for the run, and
`execution/cancel` signals only processes that are provably the run's (issue 21, point 1)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from polling import wait_for

from alpctl.client import RpcError
from alpd.testing.daemon import DaemonProcess

pytestmark = pytest.mark.both_stores


def reserve(d: DaemonProcess, work: Path) -> dict[str, Any]:
    """An interactive root, reserved by this test process (as `alp` does), not attached."""
    thread_id = d.call("thread/create", {"title": "attach", "cwd": str(work)})["id"]  # type: ignore[index]
    started = d.call(
        "thread/continue",
        {"threadId": thread_id, "runtime": "command", "cwd": str(work), "args": ["true"]},
    )
    assert isinstance(started, dict)
    return started


def refused(d: DaemonProcess, execution_id: str, pid: int) -> RpcError:
    with pytest.raises(RpcError) as caught:
        d.call("execution/attach", {"executionId": execution_id, "pid": pid})
    assert caught.value.name == "PERMISSION_DENIED", caught.value
    return caught.value


@pytest.fixture
def orphan() -> Iterator[int]:
    """A process of this user that nobody here started: its parent has exited."""
    out = subprocess.run(
        ["sh", "-c", "sleep 120 >/dev/null 2>&1 & echo $!"], capture_output=True, text=True
    )
    pid = int(out.stdout.strip())
    yield pid
    os.kill(pid, signal.SIGKILL)


def test_attach_refuses_pid_1(d: DaemonProcess, work: Path) -> None:
    execution = reserve(d, work)["execution"]
    assert refused(d, execution["id"], 1).data["reason"] == "init"
    assert d.call("execution/show", {"executionId": execution["id"]})["status"] == "reserved"  # type: ignore[index]


def test_attach_refuses_alpd_itself(d: DaemonProcess, work: Path) -> None:
    execution = reserve(d, work)["execution"]
    assert refused(d, execution["id"], d.pid).data["reason"] == "alpd"


def test_attach_refuses_the_caller_and_its_ancestors(d: DaemonProcess, work: Path) -> None:
    execution = reserve(d, work)["execution"]
    assert refused(d, execution["id"], os.getpid()).data["reason"] == "ancestor"
    assert refused(d, execution["id"], os.getppid()).data["reason"] == "ancestor"


def test_attach_refuses_a_process_the_caller_did_not_start(
    d: DaemonProcess, work: Path, orphan: int
) -> None:
    execution = reserve(d, work)["execution"]
    error = refused(d, execution["id"], orphan)
    assert error.data["reason"] == "not-a-descendant" and str(orphan) in error.message


def test_attach_takes_the_child_the_caller_started(d: DaemonProcess, work: Path) -> None:
    execution = reserve(d, work)["execution"]
    child = subprocess.Popen(["sleep", "60"])
    try:
        attached = d.call("execution/attach", {"executionId": execution["id"], "pid": child.pid})
        assert attached["status"] == "running" and attached["pid"] == child.pid  # type: ignore[index]
    finally:
        child.kill()
        child.wait()


def test_cancel_leaves_a_process_alone_that_only_carries_the_runs_label(
    d: DaemonProcess, work: Path
) -> None:
    """A process born before the run, labelled with the run's id (anyone can set a label), is
    not the run's: cancel ends the run and its own setsid-escaped child, not that process."""
    started = reserve(d, work)
    execution_id = started["execution"]["id"]
    labelled_env = {**os.environ, "ALP_EXECUTION_ID": execution_id}
    bystander = subprocess.Popen(["sleep", "120"], env=labelled_env, start_new_session=True)
    escaped = work / "escaped.pid"
    script = f"setsid sh -c 'echo $$ > {escaped}; exec sleep 120' & exec sleep 120"
    try:
        born = psutil.Process(bystander.pid).create_time()
        # the run starts a clock tick later than the bystander (start times are in ticks)
        wait_for(lambda: _now_as_start_times_count() > born + 0.05, what="the next clock tick")
        run = subprocess.Popen(
            ["sh", "-c", script], env=labelled_env, start_new_session=True, cwd=work
        )
        d.call("execution/attach", {"executionId": execution_id, "pid": run.pid})
        wait_for(lambda: escaped.exists() and escaped.read_text().strip(), what="escapee")
        escapee = int(escaped.read_text())
        cancelled = d.call("execution/cancel", {"executionId": execution_id})
        assert cancelled["outcome"] == "cancelled"  # type: ignore[index]
        run.wait(10)
        wait_for(lambda: not _alive(escapee), what="the escaped child to end")
        assert bystander.poll() is None, "cancel signalled a process that is not the run's"
    finally:
        bystander.kill()
        bystander.wait()


def _now_as_start_times_count() -> float:
    """Now, on the clock process start times are read from: the boot time plus the uptime
    (the wall clock may be far from it on a virtual machine)."""
    with open("/proc/uptime") as f:
        return float(psutil.boot_time()) + float(f.read().split()[0])


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


if sys.platform != "linux":  # pragma: no cover
    pytestmark = pytest.mark.skip("process identity is read from /proc")
