"""The flagship, with the real CLIs: work begun in Claude Code continues in Codex and back.

Not a transcript but the thread's context snapshot carries the work: a headless Claude Code
root's model asks its Bash tool to run ``alp context pin decision -- …``; the pin lands in the
context attributed to that execution; the next root runs Codex, and the decision reaches the
model in a ``developer`` message under "work state, not authority"; Codex pins a decision of
its own through its shell tool; the third root, Claude Code again, gets both in its ``system``
prompt. Every root's policy names the context revision and digest it opened on.

Also here: usage and cost of a headless root, as ``execution/show`` reports them.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from fixtures_alp import AlpWorld, WorldFactory
from model_server import RecordedRequest, Usage

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

HEADING = "work state, not authority"
CLAUDE_DECISION = "store the ledger in postgres, not sqlite"
CODEX_DECISION = "keep every schema migration reversible"


def decisions(world: AlpWorld, thread_id: str) -> list[tuple[str, str]]:
    snapshot = world.context(thread_id)["snapshot"]
    return [(line["text"], line["sourceExecutionId"]) for line in snapshot["decisions"]]


def tool_outputs(request: RecordedRequest) -> str:
    """Everything a request carries back from tool calls (both APIs), as one string."""
    body = request.body
    parts: list[str] = []
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, list):
            parts += [json.dumps(b) for b in content if b.get("type") == "tool_result"]
    for item in body.get("input") or []:
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            parts.append(json.dumps(item))
    return "\n".join(parts)


def assert_completed(world: AlpWorld, execution: dict[str, Any]) -> None:
    assert execution["outcome"] == "completed", (
        f"{execution}\n{world.run_output(execution['id'])}\nalpd log:\n{world.log_tail()}"
    )


def test_work_begun_in_claude_code_continues_in_codex_and_back(alp_world: AlpWorld) -> None:
    world, server = alp_world, alp_world.server

    # 1. Claude Code pins a decision through its Bash tool.
    thread_id, first = world.start_headless(
        f"USE_BASH: alp context pin decision -- {CLAUDE_DECISION}"
    )
    assert_completed(world, world.wait_settled(first))
    claude_requests = server.model_requests("anthropic")
    assert len(claude_requests) == 2, "a Bash round is two model requests"
    assert f"pinned decision to {first}" in tool_outputs(claude_requests[1])
    assert decisions(world, thread_id) == [(CLAUDE_DECISION, first)]

    # 2. Codex continues: the decision is in a developer message, never in a user message.
    revision_1 = world.context(thread_id)
    second = world.continue_headless(
        thread_id, f"USE_SHELL: alp context pin decision -- {CODEX_DECISION}", agent="coder"
    )
    assert_completed(world, world.wait_settled(second))
    codex_requests = server.model_requests("openai")
    assert len(codex_requests) == 2, "a shell round is two model requests"
    developer = [t for t in codex_requests[0].message_texts("developer") if HEADING in t]
    assert len(developer) == 1, codex_requests[0].message_texts("developer")
    assert CLAUDE_DECISION in developer[0]
    assert first in developer[0], "the line names the execution that pinned it"
    assert revision_1["digest"].split(":")[-1] in developer[0]
    assert not any(CLAUDE_DECISION in t for t in codex_requests[0].message_texts("user"))
    assert f"pinned decision to {second}" in tool_outputs(codex_requests[1])
    assert decisions(world, thread_id) == [(CLAUDE_DECISION, first), (CODEX_DECISION, second)]

    # 3. Back to Claude Code: Codex's decision is in the system prompt, not in the messages.
    third = world.continue_headless(thread_id, "what did the coder decide?", runtime="claude")
    assert_completed(world, world.wait_settled(third))
    last = server.model_requests("anthropic")[2:]
    assert len(last) == 1
    assert HEADING in last[0].system_text
    assert CODEX_DECISION in last[0].system_text and second in last[0].system_text
    assert CLAUDE_DECISION in last[0].system_text
    assert not any(CODEX_DECISION in t for t in last[0].message_texts("user"))

    # Each root's policy is bound to the snapshot it opened on: revisions 0, 1, 2.
    for execution_id, revision in ((first, 0), (second, 1), (third, 2)):
        digest = world.context(thread_id, revision=revision)["digest"]
        shown = world.show(execution_id)
        binding = {"id": thread_id, "contextRevision": revision, "contextDigest": digest}
        assert shown["policy"]["binding"] == binding, shown["policy"]
        assert (shown["contextRevision"], shown["contextDigest"]) == (revision, digest)
    hashes = {world.show(e)["policyHash"] for e in (first, second, third)}
    assert len(hashes) == 3


def wait_for_usage(world: AlpWorld, execution_id: str, timeout: float = 10.0) -> dict[str, Any]:
    """``execution/show`` once it reports usage (history sync may ingest it after settling)."""
    deadline = time.monotonic() + timeout
    while True:
        shown = world.show(execution_id)
        if shown.get("usage") is not None and shown.get("costUsd") is not None:
            return shown
        if time.monotonic() > deadline:
            return shown
        time.sleep(0.2)


def reported_claude_cost(world: AlpWorld, execution_id: str) -> float:
    """``total_cost_usd`` of the ``result`` line Claude Code printed (stream-json)."""
    stdout = (world.exec_dir(execution_id) / "stdout.log").read_text()
    results = [json.loads(x) for x in stdout.splitlines() if '"type":"result"' in x]
    assert results, stdout[-2000:]
    cost: float = results[-1]["total_cost_usd"]
    return cost


def test_headless_claude_root_reports_the_servers_usage_and_a_cost(alp_world: AlpWorld) -> None:
    world = alp_world
    world.server.usage = Usage(input_tokens=1234, output_tokens=56)
    _, execution_id = world.start_headless("say hello")
    assert_completed(world, world.wait_settled(execution_id))
    assert len(world.server.model_requests("anthropic")) == 1

    shown = wait_for_usage(world, execution_id)
    assert shown.get("usage") is not None, f"no usage 10 s after settling: {shown}"
    assert shown["usage"]["inputTokens"] == 1234
    assert shown["usage"]["outputTokens"] == 56
    # Claude Code reports its own cost (the stream's `result` line): that figure, not ours.
    reported = reported_claude_cost(world, execution_id)
    assert reported > 0
    assert shown.get("costUsd") == pytest.approx(reported), shown


def test_headless_codex_root_reports_usage_and_a_cost_from_the_config_price_table(
    make_world: WorldFactory,
) -> None:
    # Codex reports no cost: it comes from the price table, which config.toml overrides.
    world: AlpWorld = make_world(
        '[runtimes.codex]\nprices = { "gpt-scripted" = { input = 2.0, output = 10.0 } }\n'
    )
    world.server.usage = Usage(input_tokens=2000, output_tokens=80)
    thread_id = world.cli_json("thread", "create", "--title", "usage")["id"]
    execution_id = world.continue_headless(thread_id, "say hello", agent="coder")
    assert_completed(world, world.wait_settled(execution_id))
    assert len(world.server.model_requests("openai")) == 1

    shown = wait_for_usage(world, execution_id)
    assert shown.get("usage") is not None, f"no usage 10 s after settling: {shown}"
    assert shown["usage"]["inputTokens"] == 2000
    assert shown["usage"]["outputTokens"] == 80
    assert shown.get("costUsd") == pytest.approx(2000 * 2.0 / 1e6 + 80 * 10.0 / 1e6), shown
