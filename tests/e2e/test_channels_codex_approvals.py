"""A Codex run asks the chat before a shell command: the real Codex CLI, the scripted model
server and the fake Bot API (tests/fake_telegram.py), all on 127.0.0.1.

With `[runtimes.codex] approvals = "chat"`, a headless Codex run gets alp's PreToolUse hook
(protocol/codex_approvals.py). Before the person trusted it in Codex, no such run starts
(Codex would skip the hook and run every command unasked). `alp channel trust-codex` asks
Codex's own app-server to trust it; from then on each shell command of the run waits for
the chat: Deny → the command does not run and the model reads the denial; Approve → it
runs; no answer by `[channels] approval_timeout` → denied. Typed text approves nothing.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_telegram import FakeBotApi, fake_bot_api
from fixtures_alp import AlpWorld, WorldFactory
from model_server import TextReply
from test_channels_claude import OWNER, TOKEN, buttons, pair, roots, telegram_world, use
from test_channels_codex import tool_outputs

from protocol.codex_approvals import HOOK_HASH, HOOK_KEY

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

CONFIG = """
[channels]
per_minute = 600
approval_timeout = 12

[channels.telegram]
token_file = "{token_file}"
api_url = "{api_url}"

[runtimes.codex]
approvals = "chat"

[agents.writer]
runtime = "codex"
permissionMode = "workspace-write"
"""


@pytest.fixture
def api() -> Iterator[FakeBotApi]:
    with fake_bot_api(TOKEN) as server:
        yield server


@pytest.fixture
def world(make_world: WorldFactory, api: FakeBotApi, tmp_path: Path) -> AlpWorld:
    return telegram_world(make_world, api, tmp_path, CONFIG)


def asked(api: FakeBotApi, command: str) -> dict[str, Any]:
    def match(sent: dict[str, Any]) -> bool:
        return "asks permission" in sent["text"] and command in sent["text"]

    return api.wait_sent(match, timeout=90)


def answered(api: FakeBotApi, start: int, words: str) -> dict[str, Any]:
    """The chat's answer holding `words`, sent from the `start`-th message on."""

    def match(sent: dict[str, Any]) -> bool:
        return sent["text"].startswith(("✅ build", "❌ build")) and words in sent["text"]

    return api.wait_sent(match, timeout=90, start=start)


def test_a_codex_command_waits_for_the_chat(world: AlpWorld, api: FakeBotApi) -> None:
    thread_id: str = world.cli_json("thread", "create", "--title", "build")["id"]

    # not trusted yet: the run does not start, and says what to do
    refused = world.cli("thread", "continue", thread_id, "--headless", "--prompt", "hello",
                        "--agent", "writer", "--json")  # fmt: skip
    assert refused.returncode != 0, refused
    assert "alp channel trust-codex" in refused.stdout + refused.stderr, refused

    trusted = world.cli_json("channel", "trust-codex")
    assert trusted["key"] == HOOK_KEY and trusted["hash"] == HOOK_HASH
    assert trusted["was"] == "untrusted" and trusted["trusted"] is True
    assert "codex-approve" in trusted["command"]
    assert world.cli_json("channel", "trust-codex")["was"] == "trusted"
    config = (world.codex_home / "config.toml").read_text()
    assert HOOK_HASH in config

    pair(world, api)
    world.server.script(TextReply("hello there"))
    first = world.continue_headless(thread_id, "hello build", agent="writer")
    assert world.wait_settled(first, 90)["outcome"] == "completed", world.run_output(first)
    use(world, api, "build")

    # Deny: the command does not run, and the model reads why
    world.server.clear()
    api.user_says(OWNER, "USE_SHELL: touch denied.txt")
    prompt = asked(api, "touch denied.txt")
    assert set(buttons(prompt)) == {"Approve", "Deny"}
    api.user_says(OWNER, "approve")  # typed text approves nothing: the run still waits
    time.sleep(1)
    assert not any("approved" in e["text"] for e in api.edits)
    start = len(api.sent)
    api.press(OWNER, buttons(prompt)["Deny"], prompt["message_id"])
    answered(api, start, f"did not allow Bash: denied by telegram:{OWNER}")
    outputs = tool_outputs(world)
    assert any("did not allow Bash" in o and f"telegram:{OWNER}" in o for o in outputs), outputs
    assert not (world.work / "denied.txt").exists()
    ids = [r["id"] for r in roots(world, thread_id)]
    denied_root = roots(world, thread_id)[ids.index(first) + 1]
    assert denied_root["origin"]["door"] == "telegram"
    assert denied_root["runtime"] == "codex" and denied_root["agent"] == "writer"
    # the typed "approve" was a turn of its own, queued behind the waiting root
    answered(api, start, "scripted reply to: [alp · message from the user")

    # Approve: it runs
    world.server.clear()
    api.user_says(OWNER, "USE_SHELL: touch approved.txt")
    prompt = asked(api, "touch approved.txt")
    start = len(api.sent)
    api.press(OWNER, buttons(prompt)["Approve"], prompt["message_id"])
    answered(api, start, "tool result:")
    assert (world.work / "approved.txt").exists(), tool_outputs(world)

    # no answer by the timeout: denied
    world.server.clear()
    api.user_says(OWNER, "USE_SHELL: touch unanswered.txt")
    asked(api, "touch unanswered.txt")
    answered(api, len(api.sent), "no answer in 12 s")
    outputs = tool_outputs(world)
    assert any("did not allow Bash" in o and "no answer" in o for o in outputs), outputs
    assert not (world.work / "unanswered.txt").exists()

    # the trust gone from Codex's config: the chat's next turn (queued behind the last root's
    # settle here) is not started, and the chat is told why
    (world.codex_home / "config.toml").write_text(config.replace(HOOK_HASH, "sha256:gone"))
    start = len(api.sent)
    api.user_says(OWNER, "USE_SHELL: touch untrusted.txt")
    told = api.wait_sent(lambda s: "alp channel trust-codex" in s["text"], 60, start=start)
    assert told["chat_id"] == OWNER, told
    assert not (world.work / "untrusted.txt").exists()
    # and so is the next, with nothing running
    start = len(api.sent)
    api.user_says(OWNER, "USE_SHELL: touch untrusted.txt")
    again = api.wait_sent(lambda s: "alp channel trust-codex" in s["text"], 60, start=start)
    assert again["chat_id"] == OWNER and again is not told
    assert again["text"].startswith("⚠ build: not started")
    assert not (world.work / "untrusted.txt").exists()
