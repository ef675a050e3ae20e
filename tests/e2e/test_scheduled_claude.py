"""A scheduled root with the real Claude Code, against the scripted model server.

`alp schedule add THREAD --every 5s --runtime claude -- PROMPT` fires five seconds later
(and is paused then): a headless `scheduled` root whose origin names the schedule and its
fire time. Its final
reply becomes the thread's report (what `alp activity` shows), and the usage the server
reported is its cost in `alp activity` and, summed over the schedule's runs, in `alp ps`.
"""

from __future__ import annotations

from typing import Any

import pytest
from fixtures_alp import AlpWorld
from model_server import TextReply, Usage
from polling import wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

REPLY = "nightly check: all 3 builds are green"


def test_a_scheduled_claude_root_runs_headless_reports_and_costs(alp_world: AlpWorld) -> None:
    world = alp_world
    world.server.usage = Usage(input_tokens=3000, output_tokens=120)
    world.server.script(TextReply(REPLY))
    thread_id = world.cli_json("thread", "create", "--title", "nightly")["id"]
    added = world.cli_json(
        "schedule", "add", thread_id, "--every", "5s", "--runtime", "claude",
        "--", "check the builds",
    )  # fmt: skip
    assert added["status"] == "active" and added["nextFireAt"]

    def scheduled_root() -> dict[str, Any] | None:
        roots = world.cli_json("thread", "show", thread_id)["roots"]
        return roots[0] if roots else None

    root = wait_for(scheduled_root, 30, "the schedule to fire")
    world.cli_json("schedule", "pause", added["id"])
    assert root["kind"] == "scheduled" and root["headless"] and root["runtime"] == "claude"
    assert root["origin"]["scheduleId"] == added["id"]
    assert root["origin"]["fireTime"] == added["nextFireAt"]
    settled = world.wait_settled(root["id"], timeout=60)
    assert settled["outcome"] == "completed", world.run_output(root["id"])
    [request] = world.server.model_requests("anthropic")
    assert "check the builds" in str(request.body["messages"])

    def costed() -> dict[str, Any] | None:
        items = world.cli_json("activity", "--thread", thread_id)["items"]
        item = items[0] if items else None
        return item if item and item.get("costUsd") and item.get("report") else None

    item = wait_for(costed, 20, "the run's report and cost in alp activity")
    assert item["executionId"] == root["id"] and item["kind"] == "scheduled"
    assert item["report"].strip() == REPLY
    assert item["usage"]["inputTokens"] == 3000 and item["usage"]["outputTokens"] == 120
    assert item["costUsd"] > 0

    ps = world.cli_json("ps")
    assert ps["jobs"] == []
    [listed] = ps["schedules"]
    assert listed["id"] == added["id"] and listed["status"] == "paused"
    assert listed["runs"] == 1 and listed["lastResult"] == "completed"
    assert listed["costUsd"] == pytest.approx(item["costUsd"])
    assert "$" in world.cli("ps").stdout
    text = world.cli("activity").stdout
    assert "scheduled" in text and REPLY in text and "nightly" in text
