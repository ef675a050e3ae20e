"""Approvals from the phone on a real alpd and the fake Bot API: a directive handoff waiting
in the inbox is confirmed by its Approve button; a run's permission request is denied by
its Deny button and the run reads the denial; no answer by the timeout is a deny; a nonce
works once; typed text approves nothing."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from daemons import StartAlpd, roots, settled
from fake_telegram import FakeBotApi
from polling import wait_for
from telegram_setup import OWNER, STRANGER, config, echo_thread, pair, polling
from telegram_setup import token_file as write_token

from alpd.supervisor.supervisor import STDOUT_FILE
from alpd.testing.daemon import DaemonProcess

#: a run that asks for a permission the way `alp mcp`'s approve tool does, and prints the answer
ASKER = f"""
[agents.asker]
runtime = "command"
args = ["{sys.executable}", "-c", "import os, json; from alpctl.client import Client; c = Client.connect(os.environ['ALP_SOCKET']); r = c.call('approval/request', {{'toolName': 'Bash', 'input': {{'command': 'rm -rf build'}}, 'timeout': TIMEOUT}}); print('DECISION', json.dumps(r))"]
"""  # noqa: E501


def start(start_alpd: StartAlpd, api: FakeBotApi, tmp_path: Path, timeout: int) -> DaemonProcess:
    cfg = config(write_token(tmp_path, api.token), api) + ASKER.replace("TIMEOUT", str(timeout))
    d = start_alpd(cfg)
    polling(d)
    pair(d, api)
    return d


def buttons(sent: dict[str, Any]) -> dict[str, str]:
    markup = sent["reply_markup"]
    markup = json.loads(markup) if isinstance(markup, str) else markup
    return {b["text"]: b["callback_data"] for row in markup["inline_keyboard"] for b in row}


def test_a_directive_is_confirmed_from_the_chat_and_delivered(
    start_alpd: StartAlpd, api: FakeBotApi, tmp_path: Path, work: Path
) -> None:
    d = start(start_alpd, api, tmp_path, 30)
    echo_thread(d, work, "monitor")
    trading = echo_thread(d, work, "trading")
    d.call("handoff/send", {"target": "trading", "summary": "Sell at 42", "directive": True,
                            "from": "monitor"})  # fmt: skip
    asked = api.wait_sent(lambda s: "directive" in s["text"] and "Sell at 42" in s["text"])
    api.user_says(OWNER, "approve")  # typed text approves nothing
    api.user_says(OWNER, "/ps")
    api.wait_sent(lambda s: s["text"].startswith(("Nothing is running", "▶")))
    assert len(roots(d, trading)) == 1

    approve = buttons(asked)["Approve"]
    api.press(STRANGER, approve, asked["message_id"])  # a stranger's press is not handled
    api.press(OWNER, approve, asked["message_id"])
    wait_for(lambda: len(roots(d, trading)) == 2, what="the confirmed directive's root")
    root = roots(d, trading)[-1]
    assert root["origin"]["handoffId"]
    assert d.call("inbox/list", {})["items"] == []  # type: ignore[index]
    api.press(OWNER, approve, asked["message_id"])
    wait_for(lambda: any("already answered" in a.get("text", "") for a in api.answers))
    assert len(roots(d, trading)) == 2
    assert any("confirmed" in e["text"] for e in api.edits)


def test_a_permission_request_denied_from_the_chat_reaches_the_run(
    start_alpd: StartAlpd, api: FakeBotApi, tmp_path: Path, work: Path
) -> None:
    d = start(start_alpd, api, tmp_path, 30)
    thread = d.call("thread/create", {"title": "build", "cwd": str(work)})
    run = d.call("thread/continue", {"threadId": thread["id"], "agent": "asker",  # type: ignore[index]
                                     "headless": True, "cwd": str(work)})  # fmt: skip
    asked = api.wait_sent(lambda s: "asks permission" in s["text"])
    assert "rm -rf build" in asked["text"]
    api.press(OWNER, buttons(asked)["Deny"], asked["message_id"])
    execution = settled(d, run["execution"]["id"])  # type: ignore[index]
    out = (d.home / "executions" / execution["id"] / STDOUT_FILE).read_text()
    decision = json.loads(out.split("DECISION ", 1)[1])
    assert decision["decision"] == "deny" and decision["by"] == f"telegram:{OWNER}"


def test_no_answer_by_the_timeout_is_a_deny(
    start_alpd: StartAlpd, api: FakeBotApi, tmp_path: Path, work: Path
) -> None:
    d = start(start_alpd, api, tmp_path, 1)
    thread = d.call("thread/create", {"title": "build", "cwd": str(work)})
    run = d.call("thread/continue", {"threadId": thread["id"], "agent": "asker",  # type: ignore[index]
                                     "headless": True, "cwd": str(work)})  # fmt: skip
    asked = api.wait_sent(lambda s: "asks permission" in s["text"])
    execution = settled(d, run["execution"]["id"])  # type: ignore[index]
    out = (d.home / "executions" / execution["id"] / STDOUT_FILE).read_text()
    decision = json.loads(out.split("DECISION ", 1)[1])
    assert decision["decision"] == "deny" and "no answer in 1 s" in decision["reason"]
    api.press(OWNER, buttons(asked)["Approve"], asked["message_id"])
    wait_for(lambda: any("already answered" in a.get("text", "") for a in api.answers))
