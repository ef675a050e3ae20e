"""The Telegram door with the real Codex CLI, against the scripted model server and the fake
Bot API (tests/fake_telegram.py), both on 127.0.0.1.

A chat turn of a thread whose agent runs Codex becomes a `codex exec` root (kind interactive,
door telegram) whose answer comes back to the chat. What a Codex run started from the chat
does about permissions with `[runtimes.codex] approvals` at its default, `never`
(docs/channels.md, "Codex"): it runs in its agent's sandbox
(`permissionMode`, here read-only) with `codex exec`'s approval policy, which is `never`
whatever `-c approval_policy=…` says — a command the sandbox refuses fails inside the run and
the model reads the failure; a request to run outside the sandbox is refused by Codex itself
("approval policy is Never"); nothing is ever asked on the chat, and nothing is written.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_telegram import FakeBotApi, fake_bot_api
from fixtures_alp import AlpWorld, WorldFactory
from model_server import TextReply, ToolCallReply
from test_channels_claude import (
    CHANNEL,
    OWNER,
    STRANGER,
    TOKEN,
    pair,
    roots,
    telegram_world,
    use,
)

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

#: a Codex agent whose sandbox may read the workspace and write nothing
CAREFUL = """
[agents.careful]
runtime = "codex"
permissionMode = "read-only"
"""


@pytest.fixture
def api() -> Iterator[FakeBotApi]:
    with fake_bot_api(TOKEN) as server:
        yield server


@pytest.fixture
def world(make_world: WorldFactory, api: FakeBotApi, tmp_path: Path) -> AlpWorld:
    return telegram_world(make_world, api, tmp_path, CHANNEL + CAREFUL)


def tool_outputs(world: AlpWorld) -> list[str]:
    """What Codex sent back to the model as its tools' results."""
    return [
        str(item.get("output"))
        for request in world.server.model_requests("openai")
        for item in request.body.get("input") or []
        if item.get("type") == "function_call_output"
    ]


def answered(api: FakeBotApi, words: str) -> dict[str, Any]:
    return api.wait_sent(lambda s: s["text"].startswith("✅ build") and words in s["text"], 90)


def test_the_telegram_door_end_to_end_with_codex(world: AlpWorld, api: FakeBotApi) -> None:
    pair(world, api)
    thread_id: str = world.cli_json("thread", "create", "--title", "build")["id"]
    first = world.continue_headless(thread_id, "hello build", agent="careful")
    assert world.wait_settled(first, 90)["outcome"] == "completed", world.run_output(first)
    api.user_says(STRANGER, "/use build")

    # a chat turn is a Codex root of the thread, and its answer comes back
    use(world, api, "build")
    world.server.script(TextReply("all 12 tests pass"))
    api.user_says(OWNER, "how are the tests?")
    answered(api, "all 12 tests pass")
    root = roots(world, thread_id)[-1]
    assert root["kind"] == "interactive" and root["runtime"] == "codex"
    assert root["origin"] == {"door": "telegram", "by": f"telegram:{OWNER}"}
    assert root["agent"] == "careful"

    # a command the sandbox refuses fails inside the run: nobody is asked
    world.server.clear()
    api.user_says(OWNER, "USE_SHELL: touch made_by_codex.txt")
    answer = answered(api, "tool result:")
    outputs = tool_outputs(world)
    assert any("Read-only file system" in out for out in outputs), outputs
    assert "Read-only file system" in answer["text"]

    # asking to run outside the sandbox is refused by Codex itself: its policy never asks
    world.server.clear()
    escalate = {"cmd": "touch made_by_codex.txt", "sandbox_permissions": "require_escalated",
                "justification": "the tests need to write a file"}  # fmt: skip
    world.server.script(
        ToolCallReply(tool="exec_command", arguments=escalate), TextReply("I may not write it")
    )
    api.user_says(OWNER, "write the file anyway")
    answered(api, "I may not write it")
    outputs = tool_outputs(world)
    assert any("approval policy is Never" in out for out in outputs), outputs

    assert not (world.work / "made_by_codex.txt").exists()
    assert not any("asks permission" in text for text in api.texts(OWNER))
    assert api.texts(STRANGER) == []
    codex_roots = [r for r in roots(world, thread_id) if r["runtime"] == "codex"]
    assert len(codex_roots) == 4
    rollouts = list(world.codex_home.rglob("rollout-*.jsonl"))
    policies = {
        json.loads(line)["payload"].get("approval_policy")
        for path in rollouts
        for line in path.read_text().splitlines()
        if '"turn_context"' in line
    }
    assert policies == {"never"}, policies
