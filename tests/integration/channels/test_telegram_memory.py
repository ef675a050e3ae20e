"""Memory proposals confirmed from the chat (issue 25, point 2) on a real alpd and the fake
Bot API: a run's `remember` arrives in the paired chat with Remember / Dismiss; Remember
makes it a memory (its provenance names the chat), Dismiss drops it; `/inbox` lists what
waits; typed text and a stranger's press decide nothing; a nonce works once."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from daemons import StartAlpd, settled
from fake_telegram import FakeBotApi
from polling import wait_for
from telegram_setup import OWNER, STRANGER, config, pair, polling
from telegram_setup import token_file as write_token
from test_telegram_approvals import buttons

from alpd.testing.daemon import DaemonProcess

#: a run that proposes the memory its prompt names, as `alp mcp`'s `remember` tool does
PROPOSER = f"""
[agents.proposer]
runtime = "command"
args = ["{sys.executable}", "-c", "import os, sys; from alpctl.mcp_server import AlpTools, socket_call; AlpTools(socket_call(os.environ['ALP_SOCKET']), os.environ['ALP_THREAD_ID']).remember(sys.stdin.read().strip(), 'convention')"]
"""  # noqa: E501


@pytest.fixture
def d(start_alpd: StartAlpd, api: FakeBotApi, tmp_path: Path) -> DaemonProcess:
    daemon = start_alpd(config(write_token(tmp_path, api.token), api) + PROPOSER)
    polling(daemon)
    pair(daemon, api)
    return daemon


def propose(d: DaemonProcess, thread: str, work: Path, text: str) -> str:
    run: Any = d.call(
        "thread/continue",
        {"threadId": thread, "agent": "proposer", "headless": True, "cwd": str(work),
         "prompt": text},
    )  # fmt: skip
    return str(settled(d, run["execution"]["id"])["id"])


def memories(d: DaemonProcess, work: Path) -> list[dict[str, Any]]:
    listed: Any = d.call("memory/list", {"cwd": str(work)})
    return list(listed["memories"])


def proposals(d: DaemonProcess) -> list[dict[str, Any]]:
    inbox: Any = d.call("inbox/list", {})
    return list(inbox.get("proposals", []))


def test_a_proposal_is_remembered_from_the_chat(
    d: DaemonProcess, api: FakeBotApi, work: Path
) -> None:
    thread: Any = d.call("thread/create", {"title": "billing", "cwd": str(work)})
    run_id = propose(d, thread["id"], work, "invoices are numbered per year")
    asked = api.wait_sent(lambda s: "remember?" in s["text"] and "invoices" in s["text"])
    assert "billing" in asked["text"] and set(buttons(asked)) == {"Remember", "Dismiss"}
    api.user_says(OWNER, "yes, remember it")  # typed text decides nothing
    remember = buttons(asked)["Remember"]
    api.press(STRANGER, remember, asked["message_id"])  # nor does a stranger's press
    api.user_says(OWNER, "/ps")
    api.wait_sent(lambda s: s["text"].startswith(("Nothing is running", "▶")))
    assert memories(d, work) == [] and len(proposals(d)) == 1

    api.press(OWNER, remember, asked["message_id"])
    wait_for(lambda: len(memories(d, work)) == 1, what="the confirmed memory")
    (memory,) = memories(d, work)
    assert memory["text"] == "invoices are numbered per year" and memory["kind"] == "convention"
    shown: Any = d.call("memory/show", {"id": memory["id"]})
    cited = shown["versions"][0]["provenance"]
    assert cited["executionId"] == run_id and cited["door"] == "telegram"
    assert proposals(d) == []
    wait_for(lambda: any("remembered" in e["text"] for e in api.edits), what="the edit")
    api.press(OWNER, remember, asked["message_id"])
    wait_for(lambda: any("already answered" in a.get("text", "") for a in api.answers))
    assert len(memories(d, work)) == 1


def test_inbox_lists_proposals_and_dismiss_drops_one(
    d: DaemonProcess, api: FakeBotApi, work: Path
) -> None:
    thread: Any = d.call("thread/create", {"title": "deploys", "cwd": str(work)})
    propose(d, thread["id"], work, "deploys happen on tuesdays")
    api.wait_sent(lambda s: "remember?" in s["text"] and "tuesdays" in s["text"])
    before = len(api.sent)
    api.user_says(OWNER, "/inbox")
    listed = api.wait_sent(
        lambda s: "remember?" in s["text"] and "tuesdays" in s["text"], start=before
    )
    api.press(OWNER, buttons(listed)["Dismiss"], listed["message_id"])
    wait_for(lambda: proposals(d) == [], what="the proposal dismissed")
    assert memories(d, work) == []
    api.user_says(OWNER, "/inbox")
    api.wait_sent(lambda s: s["text"] == "Your inbox is empty.")
