"""Telegram, through python-telegram-bot's Bot API client (`telegram.Bot`), long polling.

Why this library (docs/channels.md has the measurements): `telegram.Bot` is a plain asyncio
client over httpx — no Application, no loop of its own, no threads — so it runs inside
alpd's anyio loop (asyncio backend, uvloop) like any other coroutine, and its base URL is a
constructor argument (tests point it at a fake Bot API on 127.0.0.1). aiogram would do as
well but brings aiohttp and a dispatcher we would not use. Its errors are typed (`Conflict`,
`NetworkError`, `TimedOut`, `RetryAfter`, `InvalidToken`), which is what the back-off needs.

The poll (`run`), in order:
1. the token lock (alpd.channels.token_lock): a second alpd on this token is `refused`;
2. `getMe` (a bad token is `ChannelBroken`), then `deleteWebhook` — a bot with a webhook
   set answers `getUpdates` with 409;
3. `getUpdates(offset = stored cursor, timeout = POLL_SECONDS)` in a loop; for each update,
   the cursor is stored past it *before* it is handled, so a restart handles none twice
   (updates from strangers move it in one write per batch, not one each);
4. 409 Conflict (a poller elsewhere) is `ChannelRefused`; network errors and 5xx are
   `ChannelDown`; `RetryAfter` waits what Telegram asks.

The token is in the URL of every request: httpx's own request log is silenced, and any error
text is scrubbed of it before it is shown or logged.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Final

import anyio
import structlog
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.error import (
    BadRequest,
    Conflict,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TelegramError,
    TimedOut,
)
from telegram.request import HTTPXRequest

from alpd.channels.door import (
    Button,
    ChannelBroken,
    ChannelDown,
    ChannelRefused,
    Incoming,
    Received,
    Screen,
    Sent,
    Up,
)
from alpd.channels.token_lock import TokenLock, account_key
from alpd.services.channels.cursors import PollCursor
from alpd.services.context import Daemon

#: seconds a getUpdates waits for something to happen (Telegram allows up to 50)
POLL_SECONDS: Final = 25
#: Telegram's limit is 4096 characters a message; a little is kept for the footer
TEXT_LIMIT: Final = 4000
#: the most updates one getUpdates returns (Telegram's own maximum)
BATCH: Final = 100

log = structlog.get_logger("alpd.channels.telegram")

for _noisy in ("httpx", "httpcore", "telegram"):
    # httpx logs each request's URL at INFO, and the URL holds the bot's token.
    logging.getLogger(_noisy).setLevel(logging.WARNING)


class TelegramChannel:
    name = "telegram"
    text_limit = TEXT_LIMIT

    def __init__(self, d: Daemon, token: str, api_url: str) -> None:
        self._token = token
        self.account = account_key(token)
        self.cursor = PollCursor(d, self.name, self.account)
        self.bot = Bot(
            token,
            base_url=f"{api_url}/bot",
            base_file_url=f"{api_url}/file/bot",
            request=HTTPXRequest(connection_pool_size=4, read_timeout=15, write_timeout=15),
            get_updates_request=HTTPXRequest(read_timeout=POLL_SECONDS + 10),
        )
        self._lock = TokenLock(self.name, token)

    def scrub(self, text: str) -> str:
        return text.replace(self._token, "<token>")

    async def run(self, screen: Screen, received: Received, up: Up) -> None:
        self._lock.acquire()
        try:
            await self._guarded(screen, received, up)
        finally:
            self._lock.release()

    async def _guarded(self, screen: Screen, received: Received, up: Up) -> None:
        try:
            await self._poll(screen, received, up)
        except InvalidToken:
            raise ChannelBroken("Telegram refused the bot token (check token_file)") from None
        except Conflict:
            raise ChannelRefused(
                "Telegram says another poller or a webhook uses this bot (409 Conflict)"
            ) from None
        except (NetworkError, TimedOut) as exc:
            raise ChannelDown(self.scrub(f"{type(exc).__name__}: {exc}")) from None
        except TelegramError as exc:
            raise ChannelDown(self.scrub(f"{type(exc).__name__}: {exc}")) from None

    async def _poll(self, screen: Screen, received: Received, up: Up) -> None:
        await self.bot.initialize()
        me = self.bot.bot
        await self.bot.delete_webhook(drop_pending_updates=False)
        up("polling", f"@{me.username}")
        log.info("telegram_polling", bot=me.username)
        offset = await self.cursor.load()
        while True:
            try:
                updates = await self.bot.get_updates(
                    offset=offset,
                    timeout=POLL_SECONDS,
                    limit=BATCH,
                    allowed_updates=["message", "callback_query"],
                )
            except RetryAfter as exc:
                await anyio.sleep(_seconds(exc.retry_after))
                continue
            stored = offset
            for update in updates:
                offset = update.update_id + 1
                incoming = _incoming(update)
                if incoming is None or not screen(incoming):
                    continue
                if stored != offset:
                    await self.cursor.advance(offset)
                    stored = offset
                await received(incoming)
            if offset is not None and stored != offset:
                await self.cursor.advance(offset)

    async def send(self, chat: str, text: str, buttons: Sequence[Button] = ()) -> Sent:
        markup = _markup(buttons)
        try:
            message = await self.bot.send_message(chat_id=int(chat), text=text, reply_markup=markup)
        except (Forbidden, BadRequest) as exc:
            raise ChannelDown(self.scrub(str(exc))) from None
        except TelegramError as exc:
            raise ChannelDown(self.scrub(f"{type(exc).__name__}: {exc}")) from None
        return Sent(chat, str(message.message_id))

    async def edit(self, sent: Sent, text: str) -> None:
        try:
            await self.bot.edit_message_text(
                chat_id=int(sent.chat), message_id=int(sent.message), text=text
            )
        except TelegramError as exc:
            log.warning("telegram_edit_failed", error=self.scrub(str(exc)))

    async def acknowledge(self, incoming: Incoming, text: str) -> None:
        if incoming.button_ref is None:
            return
        try:
            await self.bot.answer_callback_query(incoming.button_ref, text=text[:190])
        except TelegramError as exc:
            log.warning("telegram_ack_failed", error=self.scrub(str(exc)))

    async def close(self) -> None:
        try:
            await self.bot.shutdown()
        except Exception as exc:
            log.warning("telegram_close_failed", error=self.scrub(str(exc)))


def _seconds(value: object) -> float:
    total = getattr(value, "total_seconds", None)
    return float(total()) if callable(total) else float(value)  # type: ignore[arg-type]


def _markup(buttons: Sequence[Button]) -> InlineKeyboardMarkup | None:
    if not buttons:
        return None
    return InlineKeyboardMarkup(
        [[InlineKeyboardButton(b.label, callback_data=b.data) for b in buttons]]
    )


def _incoming(update: Update) -> Incoming | None:
    """A person's message or button press; anything else (edits, channel posts, a bot's
    own messages) is skipped."""
    if update.callback_query is not None:
        query = update.callback_query
        chat = query.message.chat.id if query.message is not None else query.from_user.id
        return Incoming(
            sender=str(query.from_user.id),
            chat=str(chat),
            name=query.from_user.full_name,
            button=query.data,
            button_ref=query.id,
        )
    message = update.message
    if message is None or message.from_user is None or message.from_user.is_bot:
        return None
    return Incoming(
        sender=str(message.from_user.id),
        chat=str(message.chat.id),
        text=message.text or message.caption or "",
        name=message.from_user.full_name,
    )


__all__ = ["POLL_SECONDS", "TEXT_LIMIT", "TelegramChannel"]
