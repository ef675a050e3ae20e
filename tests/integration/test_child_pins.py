"""Pins made inside a delegated child reach the thread through its root."""

from __future__ import annotations

import time
from pathlib import Path

from alpd.testing.daemon import running_daemon

CONFIG = """
[agents.lead]
runtime = "command"
delegatesTo = ["helper"]

[agents.helper]
runtime = "command"
"""


def test_child_pins_are_projected_when_their_root_settles(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(CONFIG)
    work = tmp_path / "work"
    work.mkdir()
    with running_daemon(tmp_path, extra_args=["--config", str(tmp_path / "config.toml")]) as d:
        thread = d.call("thread/create", {"title": "t", "cwd": str(work)})
        assert isinstance(thread, dict)
        # The lead delegates, waits for the child to settle, then ends.
        script = (
            "alp delegate helper --json -- 'alp context pin decision -- found by the helper' "
            "> child.json; "
            'for i in $(seq 100); do alp thread show "$ALP_THREAD_ID" --json | '
            "grep -q '\"children\":1' && sleep 0.5 && break; sleep 0.1; done"
        )
        result = d.cli(
            "thread", "continue", thread["id"], "--agent", "lead", "--headless", "--wait",
            "--", "/bin/sh", "-c", script, cwd=str(work),
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        deadline = time.monotonic() + 20
        decisions: list[dict[str, str]] = []
        while time.monotonic() < deadline and not decisions:
            context = d.call("thread/context", {"threadId": thread["id"]})
            assert isinstance(context, dict)
            decisions = context["snapshot"]["decisions"]
            time.sleep(0.1)
        assert [line["text"] for line in decisions] == ["found by the helper"]
        tree = d.call(
            "delegation/tree",
            {"executionId": context["snapshot"]["outcomes"][0]["sourceExecutionId"]},
        )
        assert isinstance(tree, dict)
        child = tree["children"][0]["execution"]
        assert decisions[0]["sourceExecutionId"] == child["id"]
