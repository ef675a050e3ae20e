"""Notices reaching a chat through a real alpd and the fake Bot API: a handoff delivered into
a thread and a failed root each come as a notice naming the thread; `[channels] per_minute`
holds what is over the rate; `[channels] quiet_hours` holds notices while answers still come."""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from pathlib import Path

from daemons import StartAlpd, roots, settled
from fake_telegram import FakeBotApi
from polling import wait_for
from telegram_setup import OWNER, echo_thread, pair, polling, token_file

from alpd.testing.daemon import DaemonProcess

CONFIG = """
[agents.echo]
runtime = "command"
args = ["sh", "-c", "cat > /dev/null; echo ANSWER-$ALP_EXECUTION_ID"]

[agents.fail]
runtime = "command"
args = ["sh", "-c", "cat > /dev/null; exit 3"]

[channels]
per_minute = {per_minute}
{quiet}

[channels.telegram]
token_file = "{token_file}"
api_url = "{api_url}"
"""


def start(
    start_alpd: StartAlpd, api: FakeBotApi, tmp_path: Path, per_minute: int = 600, quiet: str = ""
) -> DaemonProcess:
    d = start_alpd(CONFIG.format(per_minute=per_minute, quiet=quiet, api_url=api.url,
                                 token_file=token_file(tmp_path, api.token)))  # fmt: skip
    polling(d)
    pair(d, api)
    return d


def fail_in(d: DaemonProcess, work: Path, title: str) -> str:
    """A thread whose headless root fails (exit 3), settled."""
    thread = d.call("thread/create", {"title": title, "cwd": str(work)})
    assert isinstance(thread, dict)
    started = d.call(
        "thread/continue",
        {"threadId": thread["id"], "agent": "fail", "headless": True, "cwd": str(work),
         "prompt": "go"},
    )  # fmt: skip
    assert isinstance(started, dict)
    assert settled(d, started["execution"]["id"])["outcome"] == "failed"
    return str(thread["id"])


def notices(api: FakeBotApi) -> list[str]:
    return [t for t in api.texts(OWNER) if t.startswith("🔔")]


def test_a_handoff_and_a_failure_reach_the_chat(
    start_alpd: StartAlpd, api: FakeBotApi, tmp_path: Path, work: Path
) -> None:
    d = start(start_alpd, api, tmp_path)
    echo_thread(d, work, "monitor")
    echo_thread(d, work, "trading")
    d.call("handoff/send", {"target": "trading", "summary": "prices moved", "from": "monitor"})
    handoff = api.wait_sent(lambda s: "📨 handoff from monitor: prices moved" in s["text"])
    assert handoff["text"].startswith("🔔 trading")
    fail_in(d, work, "nightly build")
    failed = api.wait_sent(lambda s: "root failed" in s["text"])
    assert failed["text"].startswith("🔔 nightly build\n⚠ ")
    assert failed["text"].endswith(" root failed")


def test_the_rate_per_chat_holds_what_is_over(
    start_alpd: StartAlpd, api: FakeBotApi, tmp_path: Path, work: Path
) -> None:
    d = start(start_alpd, api, tmp_path, per_minute=2)
    for number in range(4):
        fail_in(d, work, f"build {number}")
    wait_for(lambda: len(notices(api)) >= 2, what="the first two notices")
    time.sleep(3)  # the outbox drains every second: what is over the rate stays held
    sent = notices(api)
    assert len(sent) == 2, sent
    assert all("root failed" in text for text in sent)


def test_quiet_hours_hold_notices_but_not_answers(
    start_alpd: StartAlpd, api: FakeBotApi, tmp_path: Path, work: Path
) -> None:
    now = datetime.now().astimezone()
    span = f"{(now - timedelta(hours=1)):%H:%M}-{(now + timedelta(hours=1)):%H:%M}"
    d = start(start_alpd, api, tmp_path, quiet=f'quiet_hours = "{span}"')
    thread = echo_thread(d, work, "ops")
    fail_in(d, work, "nightly build")
    api.user_says(OWNER, "/use ops")
    api.user_says(OWNER, "are you there?")
    api.wait_sent(lambda s: "ANSWER-" in s["text"])  # an answer is a reply: not held
    wait_for(lambda: all(r["status"] == "settled" for r in roots(d, thread)))
    time.sleep(3)
    assert notices(api) == []
