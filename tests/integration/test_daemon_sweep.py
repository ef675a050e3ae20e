"""`daemon/sweep`: the background passes run now, and the answer comes once they are done —
what a test waits on instead of sleeping to prove that nothing more happens."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from daemons import StartAlpd, settled, thread_show

from alpd.testing.daemon import DaemonProcess

CONFIG = """
[agents.watch]
runtime = "command"
args = ["true"]
"""


@pytest.fixture
def d(start_alpd: StartAlpd) -> DaemonProcess:
    return start_alpd(CONFIG)


def test_sweep_answers_after_the_settles_hooks_and_a_pass_of_each_task(
    d: DaemonProcess, work: Path
) -> None:
    thread = d.call("thread/create", {"title": "swept", "cwd": str(work)})
    assert isinstance(thread, dict)
    for _ in range(3):
        pushed = d.call(
            "thread/push", {"threadId": thread["id"], "text": "x", "source": "t", "agent": "watch"}
        )
        assert isinstance(pushed, dict) and pushed["status"] == "started", pushed
        execution = pushed["execution"]
        settled(d, execution["id"])
        asked = datetime.now(UTC) - timedelta(milliseconds=1)  # stamps: the same clock
        swept = d.call("daemon/sweep")
        assert isinstance(swept, dict)
        # The report an after-settle hook writes is there as soon as the sweep answers.
        reports = thread_show(d, thread["id"]).get("reports", [])
        assert execution["id"] in {r["executionId"] for r in reports}, reports
        tasks = {t["name"]: t for t in swept["tasks"]}
        for name in ("delivery", "scheduler"):
            assert tasks[name]["state"] == "idle", tasks[name]
            ran = datetime.fromisoformat(tasks[name]["lastRunAt"].replace("Z", "+00:00"))
            assert ran >= asked, (name, tasks[name], asked)
