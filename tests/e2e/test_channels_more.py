"""`/more` past the cut: a Codex run's final reply longer than one Telegram message (4,000
characters) comes cut at a line end, marked `… /more`; each `/more` sends the next part, in
order, until the whole reply has come, then "Nothing more." The real Codex CLI, the scripted
model server and the fake Bot API (tests/fake_telegram.py), all on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_telegram import FakeBotApi, fake_bot_api
from fixtures_alp import AlpWorld, WorldFactory
from model_server import TextReply
from test_channels_claude import CHANNEL, OWNER, TOKEN, pair, telegram_world, use
from test_channels_codex import CAREFUL

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

#: 300 numbered lines, about 14,000 characters: four Telegram messages
LONG = "\n".join(f"line {n:04d}: the build step {n} passed in {n % 7} s, all green" for n in
                 range(300))  # fmt: skip


@pytest.fixture
def api() -> Iterator[FakeBotApi]:
    with fake_bot_api(TOKEN) as server:
        yield server


@pytest.fixture
def world(make_world: WorldFactory, api: FakeBotApi, tmp_path: Path) -> AlpWorld:
    return telegram_world(make_world, api, tmp_path, CHANNEL + CAREFUL)


def next_sent(api: FakeBotApi, start: int) -> dict[str, Any]:
    return api.wait_sent(lambda s: s["chat_id"] == OWNER, timeout=60, start=start)


def test_more_sends_the_rest_of_a_long_answer_in_order(world: AlpWorld, api: FakeBotApi) -> None:
    pair(world, api)
    thread_id: str = world.cli_json("thread", "create", "--title", "long")["id"]
    first = world.continue_headless(thread_id, "hello", agent="careful")
    assert world.wait_settled(first, 90)["outcome"] == "completed", world.run_output(first)
    use(world, api, "long")

    world.server.script(TextReply(LONG))
    start = len(api.sent)
    api.user_says(OWNER, "tell me everything")
    answer = api.wait_sent(lambda s: s["text"].startswith("✅ long"), timeout=90, start=start)
    parts = [answer["text"]]
    while parts[-1].endswith("\n… /more"):
        assert len(parts) < 10, parts
        start = len(api.sent)
        api.user_says(OWNER, "/more")
        parts.append(next_sent(api, start)["text"])
    assert len(parts) >= 4, [len(p) for p in parts]
    assert all(len(p) <= 4096 for p in parts), [len(p) for p in parts]
    body = [p.removesuffix("\n… /more") for p in parts]
    assert body[0].startswith("✅ long\n\nline 0000:")
    lines = "\n".join(body).removeprefix("✅ long\n\n").split("\n")
    assert lines == LONG.split("\n"), "every line once, in order, none cut in two"

    start = len(api.sent)
    api.user_says(OWNER, "/more")
    assert next_sent(api, start)["text"] == "Nothing more."
