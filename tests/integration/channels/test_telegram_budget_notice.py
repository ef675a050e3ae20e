"""A budget's soft limit reaching a chat (issue 27, point 4; docs/budgets.md): a stand-in
`claude` spends 0.003 USD every 0.2 s, the thread's soft limit is crossed, and the fake Bot
API receives one notice naming the thread with the budget's message; a thread muted for
`budget` gets none."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from daemons import StartAlpd, settled
from fake_telegram import FakeBotApi
from polling import wait_for
from spending_claude import PRICES, spending_claude
from telegram_setup import OWNER, pair, polling, token_file

from alpd.testing.daemon import DaemonProcess

CONFIG = """
[agents.spender]
runtime = "claude"
timeout = "10m"

[runtimes.claude]
command = {command}
{prices}

[channels.telegram]
token_file = "{token_file}"
api_url = "{api_url}"
"""


@pytest.fixture
def d(start_alpd: StartAlpd, api: FakeBotApi, tmp_path: Path) -> DaemonProcess:
    fake = spending_claude(tmp_path / "claude")
    config = CONFIG.format(command=json.dumps(str(fake)), prices=PRICES, api_url=api.url,
                           token_file=token_file(tmp_path, api.token))  # fmt: skip
    d = start_alpd(config, extra_env={"CLAUDE_CONFIG_DIR": str(tmp_path / "claude-config")})
    polling(d)
    pair(d, api)
    return d


def spend_past_soft(d: DaemonProcess, work: Path, title: str) -> tuple[str, str]:
    """A thread with a soft limit of 0.003 USD (hard 100) whose root spends past it; the
    root is cancelled once the budget says `soft`."""
    thread: Any = d.call("thread/create", {"title": title, "cwd": str(work)})
    d.call("thread/budget", {"threadId": thread["id"], "usd": 100.0, "softUsd": 0.003})
    started: Any = d.call(
        "thread/continue",
        {"threadId": thread["id"], "agent": "spender", "headless": True, "prompt": "go"},
    )
    execution_id = started["execution"]["id"]

    def warned() -> bool:
        budget: Any = d.call("thread/budget", {"threadId": thread["id"]})
        return bool(budget["budget"].get("level") == "soft")

    wait_for(warned, what="the soft level", timeout=30)
    return str(thread["id"]), str(execution_id)


def notices(api: FakeBotApi) -> list[str]:
    return [t for t in api.texts(OWNER) if t.startswith("🔔")]


def test_a_soft_budget_limit_comes_to_the_chat_once(
    d: DaemonProcess, api: FakeBotApi, work: Path
) -> None:
    _, execution_id = spend_past_soft(d, work, "pricey")
    sent = api.wait_sent(lambda s: "💸" in s["text"], timeout=30)
    assert sent["text"].startswith("🔔 pricey"), sent["text"]
    assert "thread budget:" in sent["text"] and "soft limit reached" in sent["text"]
    assert "of 100.00 USD (soft 0.00)" in sent["text"], sent["text"]
    # once per level: passes go on while the root spends, no second notice
    time.sleep(5)
    d.call("execution/cancel", {"executionId": execution_id})
    settled(d, execution_id)
    assert len([t for t in notices(api) if "💸" in t]) == 1, notices(api)


def test_a_thread_muted_for_budget_sends_no_budget_notice(
    d: DaemonProcess, api: FakeBotApi, work: Path
) -> None:
    thread: Any = d.call("thread/create", {"title": "quiet money", "cwd": str(work)})
    muted = d.cli("channel", "mute", thread["id"], "--kind", "budget")
    assert muted.returncode == 0, muted.stderr
    d.call("thread/budget", {"threadId": thread["id"], "usd": 100.0, "softUsd": 0.003})
    started: Any = d.call(
        "thread/continue",
        {"threadId": thread["id"], "agent": "spender", "headless": True, "prompt": "go"},
    )

    def warned() -> bool:
        budget: Any = d.call("thread/budget", {"threadId": thread["id"]})
        return bool(budget["budget"].get("level") == "soft")

    wait_for(warned, what="the soft level", timeout=30)
    time.sleep(3)  # the outbox drains every second
    d.call("execution/cancel", {"executionId": started["execution"]["id"]})
    settled(d, started["execution"]["id"])
    assert not [t for t in notices(api) if "💸" in t], notices(api)
