"""A round that can never open (its runtime refuses to start) is told, not only logged: a
push's round as a `failures` notice to the chats (a chat's own turn is told to the person who
typed it: tests/e2e/test_channels_codex_approvals.py).
The refusal here is a Codex agent with `[runtimes.codex] approvals = "chat"` whose Codex
config has not trusted alp's hook (docs/channels.md, "Codex asking the chat"); the program is
/bin/true, which is never started."""

from __future__ import annotations

from pathlib import Path

from daemons import StartAlpd
from fake_telegram import FakeBotApi
from telegram_setup import pair, polling, token_file

CONFIG = """
[runtimes.codex]
command = "/bin/true"
approvals = "chat"
env = {{ CODEX_HOME = "{codex_home}" }}

[agents.gated]
runtime = "codex"

[channels]
per_minute = 600

[channels.telegram]
token_file = "{token_file}"
api_url = "{api_url}"
"""


def test_a_round_not_started_is_told(
    start_alpd: StartAlpd, api: FakeBotApi, tmp_path: Path, work: Path
) -> None:
    d = start_alpd(CONFIG.format(codex_home=tmp_path / "codex", api_url=api.url,
                                 token_file=token_file(tmp_path, api.token)))  # fmt: skip
    polling(d)
    pair(d, api)
    thread = d.call("thread/create", {"title": "gated", "cwd": str(work)})
    assert isinstance(thread, dict)
    pushed = d.call("thread/push", {"threadId": thread["id"], "text": "disk full",
                                    "source": "disk-alert", "agent": "gated"})  # fmt: skip
    assert isinstance(pushed, dict)
    notice = api.wait_sent(lambda s: "round not started" in s["text"])
    assert notice["text"].startswith("🔔 gated\n⚠ push round not started: ")
    assert "alp channel trust-codex" in notice["text"]
