"""A headless root across a daemon restart (no root needed, `command` runtime): one killed
while alpd was down is settled `interrupted`; one that ended while alpd was down is settled
from the exit status its shim wrote; either way the thread can go on."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from alpd.testing.daemon import DaemonProcess, running_daemon


def wait_for(path: Path, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.03)


def settled(d: DaemonProcess, execution_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        execution: dict[str, Any] = d.call(
            "execution/wait", {"executionId": execution_id, "timeout": 2}
        )  # type: ignore[assignment]
        if execution["status"] == "settled":
            return execution
        assert time.monotonic() < deadline, f"{execution_id} did not settle"


@pytest.mark.parametrize(
    ("ending", "outcome", "exit_code"), [("killed", "interrupted", None), ("exited", "failed", 3)]
)
def test_headless_root_that_ended_while_alpd_was_down_is_settled_after_restart(
    tmp_path: Path, ending: str, outcome: str, exit_code: int | None
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    script = f"touch {work / 'ready'}; while [ ! -e {work / 'go'} ]; do sleep 0.05; done; exit 3"
    with running_daemon(tmp_path) as d:
        thread_id = d.call("thread/create", {"title": "t", "cwd": str(work)})["id"]  # type: ignore[index]
        root = d.call(
            "thread/continue",
            {
                "threadId": thread_id,
                "runtime": "command",
                "headless": True,
                "cwd": str(work),
                "args": ["sh", "-c", script],
            },
        )["execution"]  # type: ignore[index]
        wait_for(work / "ready")
        d.kill9()
        exec_dir = d.home / "executions" / root["id"]
        if ending == "killed":
            # The whole run, its shim included: no exit status is ever written.
            os.killpg(root["pid"], signal.SIGKILL)
        else:
            (work / "go").touch()
            wait_for(exec_dir / "exit-status")
        d.start()
        done = settled(d, root["id"])
        assert (done["outcome"], done.get("exitCode")) == (outcome, exit_code), done
        assert (exec_dir / "exit-status").exists() == (ending == "exited")
        shown: dict[str, Any] = d.call("thread/show", {"threadId": thread_id})  # type: ignore[assignment]
        assert shown["thread"].get("busyRoot") is None
        assert [
            (o["sourceExecutionId"], o["status"]) for o in shown["context"]["snapshot"]["outcomes"]
        ] == [(root["id"], outcome)]
        after = d.call(
            "thread/continue",
            {
                "threadId": thread_id,
                "runtime": "command",
                "headless": True,
                "cwd": str(work),
                "args": ["true"],
            },
        )["execution"]  # type: ignore[index]
        assert settled(d, after["id"])["outcome"] == "completed"
