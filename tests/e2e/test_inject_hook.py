"""Inject with the real Claude Code: what reaches a running claude root arrives mid-run.

The model asks for one Bash call that waits until the test has sent something (the file
``pushed`` appears); Claude Code then runs alp's PostToolUse hook (``alp hook deliver``,
installed with the run through ``--settings``), which hands it over; the NEXT model request
of that same run — the one carrying the tool result — holds it as the hook's additional
context. No second root is opened for it, and the delivery is recorded as injected by that
run. Two senders, one path: a push, and a handoff from another thread of the person.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from fixtures_alp import AlpWorld, WorldFactory, wait_until
from model_server import RecordedRequest

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

#: a Claude agent allowed to run the waiting command without a permission prompt
LIVE_AGENT = """
[agents.live]
runtime = "claude"
allowedTools = ["Bash"]
"""
PUSHED = "the staging deploy failed at step 3: migrations"
HOOK_PREFIX = "PostToolUse:Bash hook additional context"


def conversation_text(request: RecordedRequest) -> str:
    return json.dumps(request.body.get("messages"), ensure_ascii=False)


def start_waiting_root(world: AlpWorld, title: str = "live") -> tuple[str, str]:
    wait = f"touch {world.work}/waiting; while [ ! -f {world.work}/pushed ]; do sleep 0.1; done"
    result = world.cli_json(
        "--title", title, "--agent", "live", "--headless", "--prompt", f"USE_BASH: {wait}"
    )
    return result["thread"]["id"], result["execution"]["id"]


def delivery_rows(world: AlpWorld, thread_id: str) -> list[tuple[str, str, str]]:
    with sqlite3.connect(f"file:{world.daemon.home / 'alp.db'}?mode=ro", uri=True) as db:
        return db.execute(
            "SELECT status, how, execution_id FROM deliveries WHERE thread_id = ?", (thread_id,)
        ).fetchall()


def test_a_push_to_a_running_claude_root_reaches_its_next_model_request(
    make_world: WorldFactory,
) -> None:
    world = make_world(LIVE_AGENT)
    server = world.server
    thread_id, root = start_waiting_root(world)
    try:
        wait_until(lambda: (world.work / "waiting").exists(), 40, "the Bash call to start")
        pushed = world.cli_json("push", thread_id, "--from", "ci", "--", PUSHED)
    finally:
        (world.work / "pushed").touch()
    assert pushed["status"] == "injecting"
    assert world.wait_settled(root)["outcome"] == "completed", world.run_output(root)

    first, after_tool = server.model_requests("anthropic")
    assert PUSHED not in conversation_text(first)
    conversation = conversation_text(after_tool)
    assert "tool_result" in conversation
    assert HOOK_PREFIX in conversation, conversation[-3000:]
    assert PUSHED in conversation and '[alp · push from \\"ci\\"' in conversation
    assert PUSHED not in after_tool.system_text, "delivered in the conversation, by the hook"

    world.call("daemon/sweep")  # a wrong round would start on the settle, or on a sweep
    shown = world.call("thread/show", threadId=thread_id)
    assert [r["id"] for r in shown["roots"]] == [root]
    assert delivery_rows(world, thread_id) == [("injected", "inject", root)]


SUMMARY = "Research verdict: use SQLite FTS5 (p50 1.2 ms vs 3.4 ms); drop the Tantivy branch."


def test_a_handoff_to_a_running_claude_root_is_injected_by_the_hook(
    make_world: WorldFactory,
) -> None:
    world = make_world(LIVE_AGENT)
    server = world.server
    world.cli_json("thread", "create", "--title", "research")
    build, root = start_waiting_root(world, "build")
    try:
        wait_until(lambda: (world.work / "waiting").exists(), 40, "the Bash call to start")
        sent = world.cli_json("handoff", "build", "--from", "research", "--", SUMMARY)
    finally:
        (world.work / "pushed").touch()
    assert sent["handoff"]["status"] == "sent" and sent.get("execution") is None
    assert world.wait_settled(root)["outcome"] == "completed", world.run_output(root)

    first, after_tool = server.model_requests("anthropic")
    assert SUMMARY not in conversation_text(first)
    conversation = conversation_text(after_tool)
    assert HOOK_PREFIX in conversation, conversation[-3000:]
    assert SUMMARY in conversation
    assert '[alp · handoff from thread \\"research\\"' in conversation

    world.call("daemon/sweep")  # a wrong round would start on the settle, or on a sweep
    shown = world.call("thread/show", threadId=build)
    assert [r["id"] for r in shown["roots"]] == [root]
    (arrived,) = shown["handoffsIn"]
    assert arrived["path"] == "inject" and arrived["deliveredExecutionId"] == root
    assert delivery_rows(world, build) == [("injected", "inject", root)]
