"""Pins made inside a delegated child reach the thread through its root."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from daemons import StartAlpd

#: run inside the lead: block until the child in child.json has settled
WAIT_FOR_CHILD = """
import json, os, sys
from pathlib import Path
from alpctl.client import Client
child = json.loads(Path("child.json").read_text())["execution"]["id"]
with Client.connect(Path(os.environ["ALP_SOCKET"])) as client:
    done = client.call("execution/wait", {"executionId": child, "timeout": 30})
sys.exit(0 if done["status"] == "settled" else 1)
"""

CONFIG = """
[agents.lead]
runtime = "command"
delegatesTo = ["helper"]

[agents.helper]
runtime = "command"
"""


def test_child_pins_are_projected_when_their_root_settles(
    start_alpd: StartAlpd, work: Path
) -> None:
    d = start_alpd(CONFIG)
    thread = d.call("thread/create", {"title": "t", "cwd": str(work)})
    assert isinstance(thread, dict)
    # The lead delegates, waits for the child to settle (execution/wait), then ends.
    script = (
        "alp delegate helper --json -- 'alp context pin decision -- found by the helper' "
        f"> child.json && {shlex.quote(sys.executable)} -c {shlex.quote(WAIT_FOR_CHILD)}"
    )
    result = d.cli(
        "thread", "continue", thread["id"], "--agent", "lead", "--headless", "--wait",
        "--", "/bin/sh", "-c", script, cwd=str(work),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    # The root's settle projected its checkpoint (with the child's pins) in the same
    # transaction: once --wait returned, the decision is there.
    context = d.call("thread/context", {"threadId": thread["id"]})
    assert isinstance(context, dict)
    decisions = context["snapshot"]["decisions"]
    assert [line["text"] for line in decisions] == ["found by the helper"]
    tree = d.call(
        "delegation/tree",
        {"executionId": context["snapshot"]["outcomes"][0]["sourceExecutionId"]},
    )
    assert isinstance(tree, dict)
    child = tree["children"][0]["execution"]
    assert decisions[0]["sourceExecutionId"] == child["id"]
