"""The chat commands on a real alpd against the fake Bot API: `/use @last`, `/search`,
`/recap`, `/stop`, `/clear`, `/undo`, `/more`; `alp channel unpair`
silences a sender; a token file others may read is refused with what to do."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import pytest
from daemons import StartAlpd, roots, settled, starter
from fake_telegram import FakeBotApi
from polling import wait_for
from telegram_setup import (
    CONFIG,
    OWNER,
    channel_state,
    config,
    echo_thread,
    new_token,
    pair,
    polling,
    token_file,
)

from alpd.testing.daemon import DaemonProcess

AGENTS = """
[agents.long]
runtime = "command"
args = ["sh", "-c", "cat > /dev/null; head -c 6000 /dev/zero | tr '\\\\0' x; echo; echo LONG-END"]

[agents.slow]
runtime = "command"
args = ["sh", "-c", "cat > /dev/null; sleep 60"]
"""


@pytest.fixture
def d(start_alpd: StartAlpd, api: FakeBotApi, tmp_path: Path) -> DaemonProcess:
    daemon = start_alpd(config(token_file(tmp_path, api.token), api) + AGENTS)
    polling(daemon)
    pair(daemon, api)
    return daemon


def says(api: FakeBotApi, text: str, starts: str) -> str:
    """The owner says `text`; the bot's first message to them after it starting with `starts`."""
    start = len(api.sent)
    api.user_says(OWNER, text)
    sent = api.wait_sent(
        lambda s: s["chat_id"] == OWNER and str(s["text"]).startswith(starts), start=start
    )
    return str(sent["text"])


def thread_with(d: DaemonProcess, work: Path, title: str, agent: str) -> str:
    thread = d.call("thread/create", {"title": title, "cwd": str(work)})
    assert isinstance(thread, dict)
    started = d.call(
        "thread/continue",
        {"threadId": thread["id"], "agent": agent, "headless": True, "cwd": str(work),
         "prompt": "first"},
    )  # fmt: skip
    assert isinstance(started, dict)
    if agent != "slow":
        settled(d, started["execution"]["id"])
    return str(thread["id"])


def test_use_at_last_search_recap_clear_and_undo(
    d: DaemonProcess, api: FakeBotApi, work: Path
) -> None:
    echo_thread(d, work, "the quokka audit")
    latest = echo_thread(d, work, "billing")
    assert "▶ billing" in says(api, "/use @last", "▶")
    assert "▶ billing" in says(api, "/use", "▶")  # no name: @last
    wait_for(lambda: d.call("history/search", {"query": "quokka"})["hits"])  # type: ignore[index]
    found = says(api, "/search quokka", "•")
    assert "the quokka audit" in found
    assert "Nothing found for 'zebra'" in says(api, "/search zebra", "Nothing found")
    assert says(api, "/recap", "No recap yet for this thread.")
    assert says(api, "/undo", "↩ undone: the last root's contribution is taken back")
    assert says(api, "/clear", "🧹 cleared")
    refused = says(api, "/undo", "⚠")  # the error's own message, nothing undone
    assert f"thread {latest} has no settled root to undo since the clear" in refused


def test_stop_ends_the_threads_running_root(d: DaemonProcess, api: FakeBotApi, work: Path) -> None:
    thread = thread_with(d, work, "slow build", "slow")
    running = roots(d, thread)[-1]
    assert "▶ slow build" in says(api, "/use slow build", "▶")
    assert says(api, "/stop", "⏹ stopped").endswith(running["id"])
    assert settled(d, running["id"])["outcome"] in ("cancelled", "killed")
    assert says(api, "/stop", "Nothing is running in this thread.")


def test_a_long_answer_comes_whole_from_its_tail_and_more_has_nothing(
    d: DaemonProcess, api: FakeBotApi, work: Path
) -> None:
    """A command run's answer is its output's tail (2 KiB kept), under Telegram's cut: it comes
    in one message, ending where the run ended, and /more has nothing left."""
    thread_with(d, work, "long one", "long")
    says(api, "/use long one", "▶")
    api.user_says(OWNER, "say a lot")
    answer = api.wait_sent(lambda s: s["chat_id"] == OWNER and "LONG-END" in s["text"])["text"]
    assert answer.startswith("✅ long one") and "/more" not in answer
    assert says(api, "/more", "Nothing more.")


def test_an_unpaired_sender_is_ignored(d: DaemonProcess, api: FakeBotApi, work: Path) -> None:
    echo_thread(d, work)
    assert says(api, "/ps", "Nothing is running")
    done = d.cli("channel", "unpair", "telegram", str(OWNER), "--json")
    assert done.returncode == 0, done.stderr
    listed = d.call("channel/list", {})
    assert isinstance(listed, dict)
    assert not any(str(OWNER) in str(c.get("senders")) for c in listed["channels"])
    before = len(api.sent)
    api.user_says(OWNER, "/ps")
    last = api.user_says(OWNER, "/threads")
    # the poll after the one that took them: both were screened by then
    wait_for(lambda: api.offsets and api.offsets[-1] > last, what="the next poll")
    assert len(api.sent) == before, "nothing is answered to an unpaired sender"


def test_a_token_file_others_may_read_is_refused(
    start_alpd: StartAlpd, api: FakeBotApi, tmp_path: Path
) -> None:
    path = token_file(tmp_path, api.token)
    path.chmod(0o644)
    d = start_alpd(config(path, api))
    state = wait_for(lambda: (s := channel_state(d))["state"] == "failing" and s)
    detail = str(state["detail"])
    assert f"{path} may be read by others (mode 644)" in detail
    assert f"chmod 600 {path}" in detail and api.token not in detail
    assert api.token not in d.log_text()


def test_another_poller_is_refused_and_a_lost_network_backs_off(
    start_alpd: StartAlpd, api: FakeBotApi, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The fake's 409 switch (what Telegram answers while another poller holds the token):
    the door says `refused` and why; an API it cannot reach: `backing-off`, each wait
    longer than the one before (1, 2, 4 s …)."""
    path = token_file(tmp_path, api.token)
    d = start_alpd(config(path, api))
    polling(d)
    api.conflict = True
    refused = wait_for(lambda: (s := channel_state(d))["state"] == "refused" and s)
    assert "another poller or a webhook uses this bot (409 Conflict)" in str(refused["detail"])
    assert "again in 60 s" in str(refused["detail"])

    other = tmp_path_factory.mktemp("lost")
    with ExitStack() as stack:  # another bot, whose API cannot be reached
        dead = CONFIG.format(
            token_file=token_file(other, new_token()), api_url="http://127.0.0.1:9"
        )
        lost = starter(other, stack)(dead)
        back_offs(lost)


def back_offs(lost: DaemonProcess) -> None:
    waits: list[int] = []

    def grown() -> bool:
        state = channel_state(lost)
        detail = str(state.get("detail") or "")
        if state["state"] == "backing-off" and "again in " in detail:
            seconds = int(detail.rsplit("again in ", 1)[1].split()[0])
            if not waits or waits[-1] != seconds:
                waits.append(seconds)
        return len(waits) >= 3

    wait_for(grown, what="three back-offs", timeout=30)
    assert waits[:3] == [1, 2, 4], waits
