"""A headless root across a daemon restart (no root needed, `command` runtime): one killed
while alpd was down is settled `interrupted`; one that ended while alpd was down is settled
from the exit status its shim wrote; either way the thread can go on."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest
from daemons import settled, start_headless
from polling import wait_for

from alpd.testing.daemon import DaemonProcess

pytestmark = pytest.mark.both_stores


@pytest.mark.parametrize(
    ("ending", "outcome", "exit_code"), [("killed", "interrupted", None), ("exited", "failed", 3)]
)
def test_headless_root_that_ended_while_alpd_was_down_is_settled_after_restart(
    d: DaemonProcess, work: Path, ending: str, outcome: str, exit_code: int | None
) -> None:
    script = f"touch {work / 'ready'}; while [ ! -e {work / 'go'} ]; do sleep 0.05; done; exit 3"
    thread_id = d.call("thread/create", {"title": "t", "cwd": str(work)})["id"]  # type: ignore[index]
    root = start_headless(d, thread_id, work, ["sh", "-c", script])
    wait_for((work / "ready").exists, what="the root to start")
    d.kill9()
    exec_dir = d.home / "executions" / root["id"]
    if ending == "killed":
        # The whole run, its shim included: no exit status is ever written.
        os.killpg(root["pid"], signal.SIGKILL)
    else:
        (work / "go").touch()
        wait_for((exec_dir / "exit-status").exists, what="its exit status")
    d.start()
    done = settled(d, root["id"])
    assert (done["outcome"], done.get("exitCode")) == (outcome, exit_code), done
    assert (exec_dir / "exit-status").exists() == (ending == "exited")
    shown: dict[str, Any] = d.call("thread/show", {"threadId": thread_id})  # type: ignore[assignment]
    assert shown["thread"].get("busyRoot") is None
    assert [
        (o["sourceExecutionId"], o["status"]) for o in shown["context"]["snapshot"]["outcomes"]
    ] == [(root["id"], outcome)]
    after = start_headless(d, thread_id, work, ["true"])
    assert settled(d, after["id"])["outcome"] == "completed"
