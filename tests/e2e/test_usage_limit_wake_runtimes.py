"""Resume after a usage limit with the real Claude Code and Codex CLIs (issue 27, point 5;
docs/budgets.md): the scripted model server answers every model request with the vendor's
usage-limit 429 until a reset a few seconds on (`ModelServer.limit_until`); the headless root
ends on it, alpd schedules exactly one wake of the thread at the reset (in `alp schedule
list`), the wake fires by itself and its root — same runtime, told the limit has reset —
completes.

Claude Code prints its subscriber's limit ("You've hit your 5-hour limit · resets …",
`resetsAt`) only for a claude.ai account or a gateway's token; the test gives it an unsigned
token whose audience is `claude-gateway` (an API key's 429 is an ordinary rate limit, no
wake). Claude Code retries a limit that resets within minutes itself (api_retry, up to its
max retries): the test sets CLAUDE_CODE_MAX_RETRIES=0 so the run ends at the limit.
Codex says "try again at 4:45 AM", to the minute: its wake is at the end of that minute, so
its test waits up to a minute and a half.
"""

from __future__ import annotations

import base64
import json
import time
from datetime import datetime
from typing import Any

import pytest
from fixtures_alp import AlpWorld, WorldFactory
from model_server import TextReply
from polling import wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]


def gateway_token() -> str:
    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part({'aud': 'claude-gateway'})}.x"


def wakes(world: AlpWorld, thread_id: str) -> list[dict[str, Any]]:
    listed = world.cli_json("schedule", "list", "--thread", thread_id)["schedules"]
    return [s for s in listed if s.get("reason") == "usage-limit"]


def resumes_once(world: AlpWorld, thread_id: str, first: str, reset: float, runtime: str) -> None:
    done = world.wait_settled(first, timeout=60)
    assert done["outcome"] != "completed", world.run_output(first)
    [wake] = wait_for(lambda: wakes(world, thread_id), 20, "the wake after the limit")
    assert wake["wakeOf"] == first, wake
    at = datetime.fromisoformat(wake["rule"].removeprefix("at ").replace("Z", "+00:00"))
    assert reset - 1 <= at.timestamp() <= reset + 61
    assert wake["id"] in world.cli("schedule", "list").stdout

    def woken() -> dict[str, Any] | None:
        roots = world.cli_json("thread", "show", thread_id)["roots"]
        return next((r for r in roots if r["id"] != first), None)

    root = wait_for(woken, 120, "the wake's root")
    assert root["runtime"] == runtime and root["origin"]["scheduleId"] == wake["id"]
    assert datetime.fromisoformat(root["createdAt"]).timestamp() >= reset - 1
    settled = world.wait_settled(root["id"], timeout=60)
    assert settled["outcome"] == "completed", world.run_output(root["id"])
    world.call("daemon/sweep")
    assert [w["id"] for w in wakes(world, thread_id)] == [wake["id"]]
    assert len(world.cli_json("thread", "show", thread_id)["roots"]) == 2


def test_claude_at_its_usage_limit_is_woken_at_the_reset(make_world: WorldFactory) -> None:
    world = make_world(
        "[runtimes.claude]\nenv = { "
        f'ANTHROPIC_AUTH_TOKEN = "{gateway_token()}", CLAUDE_CODE_MAX_RETRIES = "0" }}\n'
    )
    reset = int(time.time()) + 8
    world.server.limit_until(reset)
    world.server.script(TextReply("picked up where it stopped"))
    thread_id, first = world.start_headless("refactor the parser", runtime="claude")
    resumes_once(world, thread_id, first, reset, "claude")
    last = world.server.model_requests("anthropic")[-1]
    assert "has reset" in str(last.body["messages"])


def test_codex_at_its_usage_limit_is_woken_at_the_reset(alp_world: AlpWorld) -> None:
    world = alp_world
    reset = int(time.time()) + 5
    world.server.limit_until(reset)
    world.server.script(TextReply("picked up where it stopped"))
    thread_id, first = world.start_headless("refactor the parser", runtime="codex")
    resumes_once(world, thread_id, first, reset, "codex")
    last = world.server.model_requests("openai")[-1]
    assert "has reset" in json.dumps(last.body)
