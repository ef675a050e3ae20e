"""The Telegram channel on a real alpd against a fake Bot API on 127.0.0.1: pairing, a
stranger ignored, a chat turn that runs a root and answers, a restart that handles no update
twice, one poller per token, and the commands."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import pytest
from daemons import StartAlpd, roots, starter
from fake_telegram import FakeBotApi
from polling import wait_for
from telegram_setup import (
    OWNER,
    STRANGER,
    channel_state,
    config,
    echo_thread,
    pair,
    polling,
    token_file,
)

from alpctl.client import RpcError
from alpd.testing.daemon import DaemonProcess


@pytest.fixture
def d(start_alpd: StartAlpd, api: FakeBotApi, tmp_path: Path) -> DaemonProcess:
    daemon = start_alpd(config(token_file(tmp_path, api.token), api))
    polling(daemon)
    return daemon


def test_a_paired_chat_turn_runs_a_root_of_the_thread_and_the_answer_comes_back(
    d: DaemonProcess, api: FakeBotApi, work: Path
) -> None:
    thread_id = echo_thread(d, work)
    pair(d, api)
    api.user_says(OWNER, "/use ops")
    api.wait_sent(lambda s: s["chat_id"] == OWNER and "▶ ops" in s["text"])
    api.user_says(OWNER, "what is the disk usage?")

    answer = api.wait_sent(lambda s: s["chat_id"] == OWNER and "ANSWER-" in s["text"])
    chat_root = roots(d, thread_id)[-1]
    assert chat_root["kind"] == "interactive"
    assert chat_root["origin"] == {"door": "telegram", "by": f"telegram:{OWNER}"}
    assert f"ANSWER-{chat_root['id']}" in answer["text"]
    prompt = (d.home / "executions" / chat_root["id"] / "session-context.md").read_text()
    assert "The person typed this in a chat (telegram)" in prompt


def test_a_stranger_is_ignored_and_cannot_pair_without_the_code(
    d: DaemonProcess, api: FakeBotApi, work: Path
) -> None:
    thread_id = echo_thread(d, work)
    pair(d, api)
    for text in ("/use ops", "hello", "/threads", "ABCDEFGHJK"):
        api.user_says(STRANGER, text)
    api.user_says(OWNER, "/threads")
    api.wait_sent(lambda s: s["chat_id"] == OWNER and "Recent threads" in s["text"])
    assert api.texts(STRANGER) == []
    assert len(roots(d, thread_id)) == 1
    senders = channel_state(d)["senders"]
    assert [s["sender"] for s in senders] == [str(OWNER)]  # type: ignore[attr-defined]
    assert "channel_stranger_ignored" in d.log_text()


def test_a_restart_handles_no_update_twice(
    start_alpd: StartAlpd, api: FakeBotApi, tmp_path: Path, work: Path
) -> None:
    cfg = config(token_file(tmp_path, api.token), api)
    d = start_alpd(cfg)
    polling(d)
    thread_id = echo_thread(d, work)
    pair(d, api)
    api.user_says(OWNER, "/use ops")
    api.user_says(OWNER, "one")
    api.wait_sent(lambda s: "ANSWER-" in s["text"])
    wait_for(lambda: all(r["status"] == "settled" for r in roots(d, thread_id)))
    handled_last = api.next_update - 1
    d.stop()

    d.start()
    polling(d)
    wait_for(lambda: api.offsets and api.offsets[-1] == handled_last + 1, what="the offset")
    api.user_says(OWNER, "/ps")
    api.wait_sent(lambda s: s["text"].startswith(("Nothing is running", "▶")))
    assert len(roots(d, thread_id)) == 2
    assert sum("ANSWER-" in t for t in api.texts(OWNER)) == 1


def test_a_second_alpd_on_the_same_token_refuses_to_poll(
    d: DaemonProcess, api: FakeBotApi, tmp_path_factory: pytest.TempPathFactory
) -> None:
    other_home = tmp_path_factory.mktemp("second")
    with ExitStack() as stack:
        second = starter(other_home, stack)(config(token_file(other_home, api.token), api))
        wait_for(lambda: channel_state(second)["state"] == "refused", what="a refusal")
        assert "one poller per token" in str(channel_state(second)["detail"])
        assert channel_state(d)["state"] == "polling"
        with pytest.raises(RpcError) as refused:
            second.call("channel/pair", {"channel": "telegram"})
        assert refused.value.name == "CHANNEL_UNAVAILABLE"


def test_pairing_without_the_table_is_channel_not_configured(start_alpd: StartAlpd) -> None:
    d = start_alpd()
    with pytest.raises(RpcError) as refused:
        d.call("channel/pair", {"channel": "telegram"})
    assert refused.value.name == "CHANNEL_NOT_CONFIGURED"
    done = d.cli("channel", "list")
    assert done.returncode == 0 and "telegram: off" in done.stdout


def test_the_token_is_in_no_log_and_no_listing(d: DaemonProcess, api: FakeBotApi) -> None:
    pair(d, api)
    listed = d.cli("channel", "list", "--json")
    status = d.cli("ps", "--json")
    assert api.token not in listed.stdout + status.stdout + d.log_text()
    assert '"channel-telegram"' in status.stdout
