"""alp's MCP server inside real runs: the model calls `pin` as a tool, with no setup.

alpd registers `alp mcp` in every claude and codex run it launches. Here the scripted model
asks for the `pin` tool (Claude Code lists it as `mcp__alp__pin`; Codex CLI inside the
namespace `mcp__alp`); the runtime starts `alp mcp` as its own child and calls it; the pin
lands in that run's checkpoint, attributed to the execution (found by process ancestry, as
for `alp context pin`), and reaches the next root's session context. The model server's
request log shows the tools alp registered, with the descriptions written for the model.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from fixtures_alp import AlpWorld
from model_server import RecordedRequest, TextReply, ToolCallReply

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

ALP_TOOLS = {
    "pin", "context", "search", "ps", "delegate", "handoff", "inbox", "recap", "remember", "memory",
}  # fmt: skip
#: Claude Code hides its permission prompt tool (`--permission-prompt-tool mcp__alp__approve`,
#: given to headless runs) from the model; Codex lists it like any other tool of `alp mcp`
PROMPT_TOOL = {"claude": set(), "codex": {"approve"}}


def offered_alp_tools(request: RecordedRequest) -> dict[str, str]:
    """alp's tools in one model request: name → description (either API's shape)."""
    found: dict[str, str] = {}
    for tool in request.body.get("tools") or []:
        name = str(tool.get("name"))
        if name.startswith("mcp__alp__"):
            found[name.removeprefix("mcp__alp__")] = tool.get("description", "")
        if tool.get("type") == "namespace" and name == "mcp__alp":
            found.update({t["name"]: t.get("description", "") for t in tool["tools"]})
    return found


def tool_results(request: RecordedRequest) -> str:
    parts: list[str] = []
    for message in request.body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, list):
            parts += [json.dumps(b) for b in content if b.get("type") == "tool_result"]
    for item in request.body.get("input") or []:
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            parts.append(json.dumps(item))
    return "\n".join(parts)


def assert_completed(world: AlpWorld, execution: dict[str, Any]) -> None:
    assert execution["outcome"] == "completed", (
        f"{execution}\n{world.run_output(execution['id'])}\nalpd log:\n{world.log_tail()}"
    )


def pin_call(text: str) -> ToolCallReply:
    return ToolCallReply(
        tool="mcp__alp__pin", arguments={"kind": "decision", "text": text}, text="Pinning."
    )


@pytest.mark.parametrize("runtime", ["claude", "codex"])
def test_the_model_pins_through_the_alp_mcp_tool_and_the_next_root_sees_it(
    alp_world: AlpWorld, runtime: str
) -> None:
    world, server = alp_world, alp_world.server
    decision = f"ship the {runtime} importer behind a flag"
    server.script(pin_call(decision), TextReply("done"))
    thread_id, first = world.start_headless("decide, and pin it", runtime=runtime)
    assert_completed(world, world.wait_settled(first))

    requests = server.model_requests()
    tools = offered_alp_tools(requests[0])
    offered = [t.get("name") for t in requests[0].body.get("tools", [])]
    assert set(tools) == ALP_TOOLS | PROMPT_TOOL[runtime], offered
    assert "ONLY record of your work the next run" in tools["pin"]
    assert len(requests) == 2, "the tool call, then the reply to its result"
    assert f"pinned decision: {decision}" in tool_results(requests[1])

    snapshot = world.context(thread_id)["snapshot"]
    assert [(d["text"], d["sourceExecutionId"]) for d in snapshot["decisions"]] == [
        (decision, first)
    ]

    server.clear()
    second = world.continue_headless(thread_id, "go on", runtime="claude")
    assert_completed(world, world.wait_settled(second))
    assert decision in server.model_requests("anthropic")[0].system_text


def test_the_mcp_config_is_private_to_the_execution(alp_world: AlpWorld) -> None:
    world = alp_world
    world.server.script(TextReply("nothing to pin"))
    _, execution = world.start_headless("hello")
    assert_completed(world, world.wait_settled(execution))
    config = world.exec_dir(execution) / "mcp-config.json"
    assert config.stat().st_mode & 0o777 == 0o600
    server = json.loads(config.read_text())["mcpServers"]["alp"]
    assert server["args"][-3:] == ["mcp", "--socket", str(world.daemon.socket_path)]
    assert server["env"]["ALP_EXECUTION_ID"] == execution
