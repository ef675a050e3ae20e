"""An interactive run may pin before its client has attached it: the launching client stands
for the run, for its descendants only."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from alpctl.client import RpcError
from alpd.testing.daemon import running_daemon


def test_a_descendant_of_the_launcher_pins_before_attach(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with running_daemon(tmp_path) as d, d.client() as client:
        thread = client.call("thread/create", {"title": "t", "cwd": str(work)})
        # This test process is the launcher: it asks for an interactive root and has not
        # attached anything yet.
        started = client.call(
            "thread/continue",
            {"threadId": thread["id"], "runtime": "command", "args": ["true"], "cwd": str(work)},
        )
        assert started["execution"]["status"] == "reserved"
        env = {**d.env, **started["launch"]["env"]}
        pin = subprocess.run(
            [sys.executable, "-m", "alpctl", "context", "pin", "decision", "--", "early"],
            env=env, capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        assert pin.returncode == 0, pin.stderr
        assert started["execution"]["id"] in pin.stdout
        # The launcher's own call is not a call from inside the run.
        try:
            client.call("context/pin", {"kind": "decision", "text": "from the client itself"})
            raise AssertionError("the launcher itself must not pin")
        except RpcError as exc:
            assert exc.name == "PIN_OUTSIDE_EXECUTION"
        client.call(
            "execution/settle",
            {"executionId": started["execution"]["id"], "threadId": thread["id"],
             "outcome": "completed", "exitCode": 0},
        )  # fmt: skip
        context = client.call("thread/context", {"threadId": thread["id"]})
        assert [line["text"] for line in context["snapshot"]["decisions"]] == ["early"]
