"""What the Telegram channel tests share: a bot token in a 0600 file, the config naming it
and the fake Bot API, pairing a sender, and an agent that answers."""

from __future__ import annotations

import secrets
from pathlib import Path

from fake_telegram import FakeBotApi
from polling import wait_for

from alpd.testing.daemon import DaemonProcess

OWNER = 4242
STRANGER = 9999

#: `echo` answers with a line naming its execution; it reads its prompt on stdin
CONFIG = """
[agents.echo]
runtime = "command"
args = ["sh", "-c", "cat > /dev/null; echo ANSWER-$ALP_EXECUTION_ID"]

[channels]
per_minute = 600

[channels.telegram]
token_file = "{token_file}"
api_url = "{api_url}"
"""


def new_token() -> str:
    return f"{secrets.randbelow(10**9)}:{secrets.token_urlsafe(24)}"


def token_file(directory: Path, token: str) -> Path:
    path = directory / "telegram.token"
    path.write_text(token + "\n")
    path.chmod(0o600)
    return path


def config(path: Path, api: FakeBotApi) -> str:
    return CONFIG.format(token_file=path, api_url=api.url)


def channel_state(d: DaemonProcess) -> dict[str, object]:
    listed = d.call("channel/list", {})
    assert isinstance(listed, dict)
    return next(c for c in listed["channels"] if c["channel"] == "telegram")


def polling(d: DaemonProcess) -> None:
    wait_for(lambda: channel_state(d)["state"] == "polling", what="the bot to poll")


def pair(d: DaemonProcess, api: FakeBotApi, user: int = OWNER) -> None:
    code = d.call("channel/pair", {"channel": "telegram"})
    assert isinstance(code, dict)
    api.user_says(user, code["code"])
    api.wait_sent(lambda s: s["chat_id"] == user and "Paired" in s["text"])


def echo_thread(d: DaemonProcess, work: Path, title: str = "ops") -> str:
    """A thread whose last root ran `echo` (so a chat turn runs `echo` too)."""
    thread = d.call("thread/create", {"title": title, "cwd": str(work)})
    assert isinstance(thread, dict)
    started = d.call(
        "thread/continue",
        {"threadId": thread["id"], "agent": "echo", "headless": True, "cwd": str(work),
         "prompt": "first"},
    )  # fmt: skip
    assert isinstance(started, dict)
    d.call("execution/wait", {"executionId": started["execution"]["id"], "timeout": 30})
    return str(thread["id"])
