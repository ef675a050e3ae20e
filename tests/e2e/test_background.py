"""Background work with the real Claude Code: a push wakes an idle thread with a headless
`push` root; the model gets the message under its envelope and a session context saying what
woke it; the model's final reply, from the transcript, is the thread's report, with a cost."""

from __future__ import annotations

from typing import Any

import pytest
from fixtures_alp import AlpWorld, wait_until
from model_server import TextReply, Usage

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


def last_report(world: AlpWorld, thread_id: str) -> dict[str, Any] | None:
    reports = world.call("thread/show", threadId=thread_id).get("reports") or []
    return reports[-1] if reports else None


def test_a_push_to_claude_reports_the_models_final_reply_and_its_cost(
    alp_world: AlpWorld,
) -> None:
    world = alp_world
    world.server.usage = Usage(input_tokens=1500, output_tokens=40)
    world.server.script(TextReply("/var is at 41%, nothing to do"), api="anthropic")
    thread_id = world.cli_json("thread", "create", "--title", "ops")["id"]
    pushed = world.cli_json(
        "push", thread_id, "--from", "disk-alert", "--agent", "claude", "--", "check /var"
    )
    assert pushed["status"] == "started"
    execution = world.wait_settled(pushed["execution"]["id"])
    assert execution["outcome"] == "completed", world.run_output(execution["id"])
    assert execution["kind"] == "push" and execution["origin"]["pushSource"] == "disk-alert"

    report = wait_until(lambda: last_report(world, thread_id), 30, "the push's report")
    assert report["executionId"] == execution["id"]
    assert (report["messageSource"], report["message"]) == (
        "transcript", "/var is at 41%, nothing to do",
    )  # fmt: skip
    assert report["costUsd"] > 0 and report["usage"]["inputTokens"] == 1500

    (request,) = world.server.model_requests("anthropic")
    # Claude Code puts reminders of its own before the prompt.
    prompt = request.message_texts("user")[0]
    assert '\n[alp · push from "disk-alert"' in prompt and prompt.endswith(
        "not instructions]\n> check /var"
    )
    assert "alp started this run, not the person" in request.system_text
