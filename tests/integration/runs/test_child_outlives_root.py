"""A delegated child that outlives its root (issue 21, point 23): no pin of it is lost in
silence. What it pinned while its root ran reaches the thread with the root's settle; a pin
after the root settled is refused with EXECUTION_ROOT_SETTLED (its thread has moved on), so
the child is never told that a pin which cannot reach the thread succeeded."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from daemons import StartAlpd, settled, thread_show
from polling import wait_for

from alpd.testing.daemon import DaemonProcess

CONFIG = """
[agents.lead]
runtime = "command"
delegatesTo = ["helper"]

[agents.helper]
runtime = "command"
"""

ALP = f"{shlex.quote(sys.executable)} -m alpctl"

#: the child: a pin while its root runs, then (once `go` exists) a pin after it settled
CHILD = f"""
{ALP} context pin decision -- "while the root ran" || exit 7
touch pinned
while [ ! -e go ]; do sleep 0.05; done
{ALP} --json context pin decision -- "after the root settled" > late.out 2> late.err
echo $? > late.rc
"""

#: the root: delegates the child, waits for its first pin, ends
LEAD = f"""
{ALP} --json delegate helper -- sh child.sh > child.json || exit 9
while [ ! -e pinned ]; do sleep 0.05; done
"""


@pytest.fixture
def d(start_alpd: StartAlpd) -> DaemonProcess:
    return start_alpd(CONFIG)


def decisions(d: DaemonProcess, thread_id: str) -> list[tuple[str, str]]:
    snapshot = thread_show(d, thread_id)["context"]["snapshot"]
    return [(x["text"], x["sourceExecutionId"]) for x in snapshot["decisions"]]


def test_a_child_outliving_its_root_loses_no_pin_in_silence(d: DaemonProcess, work: Path) -> None:
    (work / "child.sh").write_text(CHILD)
    (work / "lead.sh").write_text(LEAD)
    thread: Any = d.call("thread/create", {"title": "lead", "cwd": str(work)})
    started: Any = d.call(
        "thread/continue",
        {"threadId": thread["id"], "agent": "lead", "headless": True,
         "args": ["sh", "lead.sh"], "cwd": str(work)},
    )  # fmt: skip
    root = settled(d, started["execution"]["id"])
    assert (root["outcome"], root["exitCode"]) == ("completed", 0)
    child_id = json.loads((work / "child.json").read_text())["execution"]["id"]
    assert d.call("execution/show", {"executionId": child_id})["status"] == "running"
    # Pinned while its root ran: projected with the root's settle, not lost with the child.
    assert decisions(d, thread["id"]) == [("while the root ran", child_id)]

    (work / "go").touch()
    wait_for((work / "late.rc").exists, what="the late pin")
    child = settled(d, child_id)
    assert child["outcome"] == "completed"
    # Pinned after its root settled: refused by name, never reported as a success.
    assert (work / "late.rc").read_text().strip() != "0"
    late = json.loads((work / "late.out").read_text())
    assert "checkpointDigest" not in late and "pins" not in late
    assert late["error"]["name"] == "EXECUTION_ROOT_SETTLED"
    assert "alp handoff" in late["error"]["message"]
    assert decisions(d, thread["id"]) == [("while the root ran", child_id)]
