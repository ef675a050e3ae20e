"""Recovery after Telegram's 409 Conflict (another poller holds the bot): the door is
`refused` while it lasts and polls again by itself once it ends (its retry comes 60 s
later); a message sent meanwhile is handled once it is back, once, and nothing handled
before the conflict is handled again."""

from __future__ import annotations

from pathlib import Path

import pytest
from daemons import StartAlpd, roots
from fake_telegram import FakeBotApi
from polling import wait_for
from telegram_setup import (
    OWNER,
    channel_state,
    config,
    echo_thread,
    pair,
    polling,
    token_file,
)

pytestmark = [pytest.mark.timeout(180)]


def answers(api: FakeBotApi) -> list[str]:
    return [t for t in api.texts(OWNER) if "ANSWER-" in t]


def test_the_door_polls_again_after_a_conflict_and_handles_each_message_once(
    start_alpd: StartAlpd, api: FakeBotApi, tmp_path: Path, work: Path
) -> None:
    d = start_alpd(config(token_file(tmp_path, api.token), api))
    polling(d)
    pair(d, api)
    thread = echo_thread(d, work, "ops")
    api.user_says(OWNER, "/use ops")
    api.user_says(OWNER, "before the conflict")
    wait_for(lambda: len(answers(api)) == 1, what="the first answer")

    api.conflict = True
    refused = wait_for(lambda: (s := channel_state(d))["state"] == "refused" and s)
    assert "409 Conflict" in str(refused["detail"]) and "again in 60 s" in str(refused["detail"])
    api.user_says(OWNER, "during the conflict")
    api.conflict = False

    wait_for(lambda: channel_state(d)["state"] == "polling", 90, "the door to poll again")
    wait_for(lambda: len(answers(api)) == 2, 30, "the answer to what was sent meanwhile")
    wait_for(lambda: all(r["status"] == "settled" for r in roots(d, thread)), 30)
    chat_roots = [r for r in roots(d, thread) if r["origin"]["door"] == "telegram"]
    assert len(chat_roots) == 2, chat_roots
    assert len(answers(api)) == 2, answers(api)
