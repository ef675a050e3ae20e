"""Which execution a pin belongs to is found from the caller's process ancestry, and only a
run that is still going may pin: a process of a settled run is refused, even when a
long-lived launcher (an editor) has reserved its next root; a reused pid (same number,
another start time) is not the run."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from daemons import StartAlpd, start_headless

from alpctl.client import RpcError
from alpd.testing.daemon import DaemonProcess


def wait_for_file(path: Path, timeout: float = 30.0) -> str:
    """The file's text once a whole line is in it (`echo` creates, then writes)."""
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text().endswith("\n")):
        assert time.monotonic() < deadline, f"{path} never got a line"
        time.sleep(0.03)
    return path.read_text()


def pin_when_told(work: Path, text: str) -> str:
    """A run that waits for `go`, pins `text`, and records the pin's exit status and stderr."""
    return (
        f"while [ ! -e {work / 'go'} ]; do sleep 0.05; done; "
        f"alp context pin decision -- '{text}' 2> {work / 'pin.err'}; "
        f"echo $? > {work / 'pin.rc'}; exec sleep 30"
    )


def interactive_root(d: DaemonProcess, thread_id: str, work: Path, script: str) -> dict[str, Any]:
    """An interactive root launched by this test process (as an editor would)."""
    started: dict[str, Any] = d.call(
        "thread/continue",
        {"threadId": thread_id, "runtime": "command", "cwd": str(work),
         "args": ["sh", "-c", script]},
    )  # fmt: skip
    return started


def spawn(d: DaemonProcess, launch: dict[str, Any]) -> subprocess.Popen[bytes]:
    bin_dir = os.path.dirname(sys.executable)
    env = {**d.env, **launch["env"], "PATH": bin_dir + os.pathsep + os.environ["PATH"]}
    return subprocess.Popen(launch["argv"], env=env, cwd=launch["cwd"], start_new_session=True)


def decisions(d: DaemonProcess, thread_id: str) -> list[str]:
    snapshot = d.call("thread/context", {"threadId": thread_id})["snapshot"]  # type: ignore[index]
    return [line["text"] for line in snapshot["decisions"]]


def test_a_process_of_a_settled_root_cannot_pin_into_the_launchers_next_root(
    d: DaemonProcess, work: Path
) -> None:
    first_thread = d.call("thread/create", {"title": "first", "cwd": str(work)})["id"]  # type: ignore[index]
    next_thread = d.call("thread/create", {"title": "next", "cwd": str(work)})["id"]  # type: ignore[index]
    first = interactive_root(d, first_thread, work, pin_when_told(work, "left behind"))
    process = spawn(d, first["launch"])
    try:
        execution_id = first["execution"]["id"]
        d.call("execution/attach", {"executionId": execution_id, "pid": process.pid})
        # The launcher settles the root while a process of it still runs, then reserves the
        # next root (not attached yet): its descendants would stand for that one.
        d.call(
            "execution/settle",
            {"executionId": execution_id, "threadId": first_thread, "outcome": "completed"},
        )
        following = interactive_root(d, next_thread, work, "true")
        (work / "go").touch()
        assert wait_for_file(work / "pin.rc").strip() == "1"
        error = (work / "pin.err").read_text()
        assert "PIN_OUTSIDE_EXECUTION" in error and execution_id in error, error
        assert decisions(d, next_thread) == decisions(d, first_thread) == []
        d.call(
            "execution/settle",
            {"executionId": following["execution"]["id"], "outcome": "completed"},
        )
        assert decisions(d, next_thread) == []
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)


def test_a_reused_pid_is_not_the_run_start_time_checked(start_alpd: StartAlpd, work: Path) -> None:
    """The run's process is alive with the recorded pid, but the recorded start time says it
    is another process (what a pid reused after the run ended looks like): not the run.
    Runs without cgroups here: with one, the process is the run's by its cgroup, whatever
    the row says (alpd.supervisor.cgroups)."""
    d = start_alpd(extra_env={"ALP_RUN_CGROUPS": "off"})
    thread_id = d.call("thread/create", {"title": "t", "cwd": str(work)})["id"]  # type: ignore[index]
    root = start_headless(
        d, thread_id, work, ["sh", "-c", pin_when_told(work, "from a reused pid")]
    )
    try:
        conn = sqlite3.connect(d.home / "alp.db", timeout=10, isolation_level=None)
        try:
            conn.execute("DROP TRIGGER IF EXISTS executions_policy_immutable")
            conn.execute(
                "UPDATE executions SET pid_start_time = pid_start_time - 3600 WHERE id = ?",
                (root["id"],),
            )
        finally:
            conn.close()
        (work / "go").touch()
        assert wait_for_file(work / "pin.rc").strip() == "1"
        assert "PIN_OUTSIDE_EXECUTION" in (work / "pin.err").read_text()
    finally:
        try:
            d.call("execution/cancel", {"executionId": root["id"]})
        except RpcError as exc:
            assert exc.name == "EXECUTION_SETTLED"
    assert "from a reused pid" not in decisions(d, thread_id)
