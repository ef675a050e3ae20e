"""The fake Bot API every Telegram test here talks to (a WeCom test names its own `api`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_telegram import FakeBotApi, fake_bot_api
from telegram_setup import new_token


@pytest.fixture
def api() -> Iterator[FakeBotApi]:
    with fake_bot_api(new_token()) as server:
        yield server
