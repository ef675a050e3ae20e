"""The Telegram door with the real Claude Code, against the scripted model server and the fake
Bot API (tests/fake_telegram.py), both on 127.0.0.1.

- A permission asked from the chat: the model asks for a Bash command the run's policy does
  not allow; Claude Code asks its permission prompt tool (`mcp__alp__approve`, `alp mcp`),
  which asks alpd (`approval/request`); the fake Bot API receives Approve / Deny; the test
  presses Deny; the model's next request carries the denial as the tool's result, and the
  command never ran.
- The door end to end: pair; a stranger is ignored; a message becomes a root of the chat's
  thread (kind interactive, door telegram, runtime claude) whose answer comes back; a
  scheduled root's report arrives as a notice; a directive handoff approved by its button is
  delivered (a root of the target thread); a restart handles no update twice.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_telegram import FakeBotApi, fake_bot_api
from fixtures_alp import AlpWorld, WorldFactory
from model_server import RecordedRequest, TextReply
from polling import wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

OWNER = 4242
STRANGER = 9999
TOKEN = "123456:e2e-token-AAAAAAAAAAAAAAAAAAAAAAAAAAA"

CHANNEL = """
[channels]
per_minute = 600
approval_timeout = 60

[channels.telegram]
token_file = "{token_file}"
api_url = "{api_url}"
"""


@pytest.fixture
def api() -> Iterator[FakeBotApi]:
    with fake_bot_api(TOKEN) as server:
        yield server


@pytest.fixture
def world(make_world: WorldFactory, api: FakeBotApi, tmp_path: Path) -> AlpWorld:
    return telegram_world(make_world, api, tmp_path, CHANNEL)


def telegram_world(
    make_world: WorldFactory, api: FakeBotApi, tmp_path: Path, config: str
) -> AlpWorld:
    """A world whose alpd polls the fake Bot API with the bot token in a 0600 file; `config`
    is formatted with `token_file` and `api_url`."""
    token_file = tmp_path / "telegram.token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    built = make_world(config.format(token_file=token_file, api_url=api.url))
    polling(built)
    return built


def channel(world: AlpWorld) -> dict[str, Any]:
    listed = world.cli_json("channel", "list")
    return next(c for c in listed["channels"] if c["channel"] == "telegram")


def polling(world: AlpWorld) -> None:
    wait_for(lambda: channel(world)["state"] == "polling", 30, "the bot to poll")


def pair(world: AlpWorld, api: FakeBotApi) -> None:
    code = world.cli_json("channel", "pair", "telegram")["code"]
    api.user_says(OWNER, code)
    api.wait_sent(lambda s: s["chat_id"] == OWNER and "Paired" in s["text"])


def buttons(sent: dict[str, Any]) -> dict[str, str]:
    markup = sent["reply_markup"]
    markup = json.loads(markup) if isinstance(markup, str) else markup
    return {b["text"]: b["callback_data"] for row in markup["inline_keyboard"] for b in row}


def roots(world: AlpWorld, thread_id: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = world.cli_json("thread", "show", thread_id)["roots"]
    return found


def tool_results(request: RecordedRequest) -> list[dict[str, Any]]:
    return [
        block
        for message in request.body.get("messages") or []
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def use(world: AlpWorld, api: FakeBotApi, title: str) -> None:
    api.user_says(OWNER, f"/use {title}")
    api.wait_sent(lambda s: s["chat_id"] == OWNER and f"▶ {title}" in s["text"])


def settled_claude_thread(world: AlpWorld, title: str) -> str:
    """A thread whose last root ran Claude Code (a chat turn continues it with Claude)."""
    thread_id: str = world.cli_json("thread", "create", "--title", title)["id"]
    first = world.continue_headless(thread_id, f"hello {title}", runtime="claude")
    assert world.wait_settled(first)["outcome"] == "completed", world.run_output(first)
    return thread_id


def test_a_permission_denied_from_the_chat_reaches_claude(world: AlpWorld, api: FakeBotApi) -> None:
    pair(world, api)
    thread_id = settled_claude_thread(world, "build")
    use(world, api, "build")
    world.server.clear()
    api.user_says(OWNER, "USE_BASH: touch made_by_tool.txt")

    asked = api.wait_sent(lambda s: "asks permission" in s["text"], timeout=60)
    assert "Bash: touch made_by_tool.txt" in asked["text"]
    assert set(buttons(asked)) == {"Approve", "Deny"}
    api.user_says(OWNER, "approve")  # typed text approves nothing: the run still waits
    api.press(OWNER, buttons(asked)["Deny"], asked["message_id"])

    answer = api.wait_sent(lambda s: s["text"].startswith("✅ build"), timeout=60)
    root = roots(world, thread_id)[-1]
    assert root["origin"]["door"] == "telegram" and root["runtime"] == "claude"
    assert world.wait_settled(root["id"])["outcome"] == "completed", world.run_output(root["id"])
    requests = world.server.model_requests("anthropic")
    results = [r for request in requests for r in tool_results(request)]
    assert results, [r.body.get("messages") for r in requests]
    denial = json.dumps(results[-1])
    assert "did not allow Bash" in denial and f"telegram:{OWNER}" in denial, denial
    assert results[-1].get("is_error") is True
    assert not (world.work / "made_by_tool.txt").exists()
    assert "tool result:" in answer["text"]
    assert any(f"denied · telegram:{OWNER}" in e["text"] for e in api.edits)


def test_the_telegram_door_end_to_end_with_claude(world: AlpWorld, api: FakeBotApi) -> None:
    pair(world, api)
    ops = settled_claude_thread(world, "ops")
    settled_claude_thread(world, "monitor")

    # a stranger is ignored: nothing sent to them, nothing run
    for text in ("/use ops", "rm everything", "ABCDEFGHJK"):
        api.user_says(STRANGER, text)

    # a message becomes a root of the chat's thread, and its answer comes back
    use(world, api, "ops")
    world.server.script(TextReply("the disk is 41% full"))
    api.user_says(OWNER, "how is the disk?")
    answer = api.wait_sent(lambda s: "the disk is 41% full" in s["text"], timeout=60)
    assert answer["text"].startswith("✅ ops")
    root = roots(world, ops)[-1]
    assert root["kind"] == "interactive" and root["runtime"] == "claude"
    assert root["origin"] == {"door": "telegram", "by": f"telegram:{OWNER}"}
    assert api.texts(STRANGER) == []
    assert len(roots(world, ops)) == 2

    # a scheduled root's report arrives as a notice
    world.server.script(TextReply("nightly: all 3 builds green"))
    added = world.cli_json("schedule", "add", ops, "--every", "5s", "--runtime", "claude",
                           "--", "nightly check")  # fmt: skip
    report = api.wait_sent(lambda s: "scheduled run completed" in s["text"], timeout=60)
    world.cli_json("schedule", "pause", added["id"])
    assert "ops" in report["text"] and "nightly: all 3 builds green" in report["text"]

    # a directive handoff approved from the chat is delivered
    before = len(roots(world, ops))
    world.call("handoff/send", target="ops", summary="rotate the logs", directive=True,
               **{"from": "monitor"})  # fmt: skip
    asked = api.wait_sent(lambda s: "rotate the logs" in s["text"] and "reply_markup" in s)
    api.press(OWNER, buttons(asked)["Approve"], asked["message_id"])
    wait_for(lambda: len(roots(world, ops)) > before, 30, "the confirmed directive's root")
    delivered = roots(world, ops)[-1]
    assert delivered["origin"].get("handoffId")
    assert world.wait_settled(delivered["id"], 60)["outcome"] == "completed"

    # a restart handles no update twice
    wait_for(lambda: all(r["status"] == "settled" for r in roots(world, ops)), 60, "idle")
    answered = sum("the disk is 41% full" in t for t in api.texts(OWNER))
    last = api.next_update - 1
    count = len(roots(world, ops))
    world.daemon.stop()
    world.daemon.start()
    polling(world)
    wait_for(lambda: api.offsets and api.offsets[-1] == last + 1, 30, "the stored offset")
    api.user_says(OWNER, "/ps")
    api.wait_sent(lambda s: s["text"].startswith(("Nothing is running", "▶")))
    assert len(roots(world, ops)) == count
    assert sum("the disk is 41% full" in t for t in api.texts(OWNER)) == answered == 1
    assert api.texts(STRANGER) == []
