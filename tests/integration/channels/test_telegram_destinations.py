"""Where reports go (issue 23, point 7) and per-thread mutes, on a real alpd and the fake
Bot API: a schedule's or a push's `--to` sends its report to the chats it names, to none, or
into another thread (under a report envelope); a muted thread's notices reach no chat until
unmuted, from the CLI or the chat; a bad destination or a run muting is refused by name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from daemons import StartAlpd, cli_json, roots, settled
from fake_telegram import FakeBotApi
from polling import wait_for
from telegram_setup import OWNER, config, echo_thread, pair, polling, token_file

from alpctl.client import RpcError
from alpd.testing.daemon import DaemonProcess

#: `keep` answers like `echo` and keeps the prompt it was given in its cwd
KEEP = """
[agents.keep]
runtime = "command"
args = ["sh", "-c", "cat > prompt-$ALP_EXECUTION_ID.txt; echo ANSWER-$ALP_EXECUTION_ID"]
"""


@pytest.fixture
def d(start_alpd: StartAlpd, api: FakeBotApi, tmp_path: Path) -> DaemonProcess:
    daemon = start_alpd(config(token_file(tmp_path, api.token), api) + KEEP)
    polling(daemon)
    pair(daemon, api)
    return daemon


def fire(d: DaemonProcess, thread: str, *to: str) -> dict[str, Any]:
    """A schedule of `thread` with `--to` each of `to`, fired now and settled."""
    flags = [arg for dest in to for arg in ("--to", dest)]
    added = d.cli("schedule", "add", thread, "--every", "1d", *flags, "--json", "--", "check")
    assert added.returncode == 0, added.stderr
    schedule = json.loads(added.stdout)
    fired = cli_json(d, "schedule", "run", schedule["id"])
    return settled(d, fired["execution"]["id"])


def notices(api: FakeBotApi, title: str) -> list[str]:
    return [t for t in api.texts(OWNER) if t.startswith(f"🔔 {title}")]


def test_a_schedule_reports_to_the_chats_it_names_or_to_none(
    d: DaemonProcess, api: FakeBotApi, work: Path
) -> None:
    for title in ("quiet", "elsewhere", "loud", "direct"):
        echo_thread(d, work, title)
    quiet = fire(d, "quiet", "none")
    assert quiet["origin"]["reportTo"] == ["none"]
    shown = cli_json(d, "schedule", "show", quiet["origin"]["scheduleId"])
    assert shown["reportTo"] == ["none"]
    assert "reports to none" in d.cli("schedule", "show", shown["id"]).stdout
    fire(d, "elsewhere", "wechat")  # a channel not running here: nobody on telegram
    fire(d, "loud")  # unset: every paired chat
    api.wait_sent(lambda s: s["text"].startswith("🔔 loud") and "scheduled run" in s["text"])
    fire(d, "direct", "telegram")
    api.wait_sent(lambda s: s["text"].startswith("🔔 direct"))
    assert notices(api, "quiet") == [] and notices(api, "elsewhere") == []
    activity = cli_json(d, "activity", "--thread", "quiet")
    assert any(item.get("report") for item in activity["items"])  # its thread keeps it


def test_a_push_report_is_delivered_into_another_thread(
    d: DaemonProcess, api: FakeBotApi, work: Path
) -> None:
    echo_thread(d, work, "nightly")
    digest: Any = d.call("thread/create", {"title": "digest", "cwd": str(work)})
    first: Any = d.call("thread/continue", {"threadId": digest["id"], "agent": "keep",
                                            "headless": True, "cwd": str(work)})  # fmt: skip
    settled(d, first["execution"]["id"])
    done = d.cli("push", "nightly", "--from", "cron", "--to", "thread:digest", "--json",
                 "--", "build it")  # fmt: skip
    assert done.returncode == 0, done.stderr
    pushed = json.loads(done.stdout)
    run = settled(d, pushed["execution"]["id"])
    assert run["origin"]["reportTo"] == [f"thread:{digest['id']}"]
    wait_for(lambda: len(roots(d, digest["id"])) == 2, what="the report's root in digest")
    root = settled(d, roots(d, digest["id"])[-1]["id"])
    assert root["kind"] == "push" and root["origin"]["door"] == "report"
    assert "reportTo" not in root["origin"]  # forwarded once, never on
    text = (work / f"prompt-{root['id']}.txt").read_text()
    assert f"ANSWER-{run['id']}" in text
    assert '[alp · report of "push run of nightly"' in text and "not instructions" in text
    assert notices(api, "nightly") == []  # --to thread: names no chat


def test_muted_threads_reach_no_chat_until_unmuted(
    d: DaemonProcess, api: FakeBotApi, work: Path
) -> None:
    echo_thread(d, work, "noisy")
    echo_thread(d, work, "calm")
    muted = cli_json(d, "channel", "mute", "noisy")
    assert muted["kinds"] == ["budget", "failures", "handoffs", "reports"]
    listed = cli_json(d, "channel", "list")
    assert [m["threadTitle"] for m in listed["muted"]] == ["noisy"]
    assert "muted: noisy" in d.cli("channel", "list").stdout
    fire(d, "noisy")
    fire(d, "calm")
    api.wait_sent(lambda s: s["text"].startswith("🔔 calm"))
    assert notices(api, "noisy") == []

    unmuted = cli_json(d, "channel", "unmute", "noisy", "--kind", "reports")
    assert unmuted["kinds"] == ["budget", "failures", "handoffs"]
    fire(d, "noisy")
    api.wait_sent(lambda s: s["text"].startswith("🔔 noisy"))

    api.user_says(OWNER, "/use calm")
    api.wait_sent(lambda s: "▶ calm" in s["text"])
    api.user_says(OWNER, "/mute")
    api.wait_sent(lambda s: s["text"].startswith("🔕 muted"))
    assert "reports" in cli_json(d, "channel", "list")["muted"][0]["kinds"]
    before = len(notices(api, "calm"))
    fire(d, "calm")
    fire(d, "noisy")
    wait_for(lambda: len(notices(api, "noisy")) == 2, what="noisy's second notice")
    assert len(notices(api, "calm")) == before
    api.user_says(OWNER, "/unmute")
    api.wait_sent(lambda s: s["text"].startswith("🔔 unmuted"))
    assert cli_json(d, "channel", "list")["muted"][0]["threadTitle"] == "noisy"


def test_bad_destinations_and_a_run_muting_are_refused(
    d: DaemonProcess, api: FakeBotApi, work: Path
) -> None:
    thread = echo_thread(d, work, "ops")
    for to, words in (
        (["sms"], "unknown destination"),
        (["none", "telegram"], "cannot be named with others"),
        ([f"thread:{thread}"], "own thread"),
    ):
        with pytest.raises(RpcError) as refused:
            d.call("schedule/create", {"threadId": thread, "prompt": "x", "every": "1d",
                                       "to": to})  # fmt: skip
        assert refused.value.name == "INVALID_ARGUMENT" and words in str(refused.value)
    with pytest.raises(RpcError) as missing:
        d.call("thread/push", {"threadId": thread, "text": "x", "source": "ci",
                               "to": ["thread:no such thread"]})  # fmt: skip
    assert missing.value.name == "THREAD_NOT_FOUND"
    log = work / "mute.log"
    done = d.cli(
        "thread", "continue", thread, "--json", "--runtime", "command", "--headless", "--wait",
        "--", "sh", "-c", f"alp channel mute ops > {log} 2>&1; echo $? >> {log}", cwd=str(work),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "NOT_FROM_A_RUN" in log.read_text()
    assert cli_json(d, "channel", "list").get("muted", []) == []
