"""Who may speak through a chat channel.

`alp channel pair CHANNEL` (a local door: the socket or the page, never a chat) makes a
one-time code, valid `CODE_SECONDS`; the first sender who sends exactly that code to the bot
is bound to this alpd's owner (`channel_senders`) and the code is spent. Anyone else's
messages are not handled: `allowed` is asked for every incoming message before anything
else. Unpairing is again only from a local door. The allow-list is kept in memory as well,
read at start and changed with each pair and unpair, so a flood of strangers costs a set
lookup, not a query.

A code is 10 characters of an alphabet without look-alikes (about 50 bits), compared in
constant time; at most `MAX_CODES` are outstanding per channel (the oldest goes).
"""

from __future__ import annotations

import hmac
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

from alpd.services.context import Daemon
from alpd.store import channels as store
from alpd.store.db import Tx
from protocol import messages as m

CODE_SECONDS: Final = 600.0
MAX_CODES: Final = 4
_ALPHABET: Final = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH: Final = 10


@dataclass(frozen=True, slots=True)
class PendingCode:
    code: str
    #: monotonic deadline
    until: float
    expires_at: str


def new_code() -> str:
    return "".join(secrets.choice(_ALPHABET) for _ in range(CODE_LENGTH))


def normalized(text: str) -> str:
    """What a person may have typed around a code: `/start CODE`, spaces, lower case."""
    words = text.strip().split()
    if words and words[0].startswith("/start"):
        words = words[1:]
    return "".join(words).replace("-", "").upper()


class Pairing:
    def __init__(self, d: Daemon) -> None:
        self.d = d
        self._codes: dict[str, list[PendingCode]] = {}
        self._allowed: set[tuple[str, str]] = set()

    async def load(self) -> None:
        self._allowed = {(r.channel, r.sender) for r in await store.senders(self.d.store)}

    def allowed(self, channel: str, sender: str) -> bool:
        return (channel, sender) in self._allowed

    def offer(self, channel: str) -> PendingCode:
        """A fresh one-time code for `channel` (the CLI prints it)."""
        now = time.monotonic()
        live = [c for c in self._codes.get(channel, []) if c.until > now][-(MAX_CODES - 1) :]
        expires = datetime.now(UTC) + timedelta(seconds=CODE_SECONDS)
        code = PendingCode(new_code(), now + CODE_SECONDS, expires.isoformat(timespec="seconds"))
        self._codes[channel] = [*live, code]
        return code

    def waiting_until(self, channel: str) -> str | None:
        now = time.monotonic()
        live = [c for c in self._codes.get(channel, []) if c.until > now]
        return live[-1].expires_at if live else None

    def redeemable(self, channel: str, text: str) -> PendingCode | None:
        """The pending code `text` carries, if any (constant-time comparison)."""
        typed = normalized(text)
        if len(typed) != CODE_LENGTH:
            return None
        now = time.monotonic()
        for code in self._codes.get(channel, []):
            if code.until > now and hmac.compare_digest(code.code, typed):
                return code
        return None

    async def redeem(
        self, channel: str, code: PendingCode, *, sender: str, chat: str, name: str | None
    ) -> None:
        """Spend `code` and bind `sender` (chatting in `chat`) to the owner."""
        self._codes[channel] = [c for c in self._codes.get(channel, []) if c is not code]
        row = store.SenderRow(channel, sender, self.d.owner, chat, name, self.d.clock.now_iso())

        async def unit(tx: Tx) -> None:
            await store.upsert_sender(tx, row)

        await self.d.store.write(unit)
        self._allowed.add((channel, sender))

    async def unpair(self, channel: str, sender: str) -> bool:
        async def unit(tx: Tx) -> bool:
            return await store.delete_sender(tx, channel, sender)

        removed = await self.d.store.write(unit)
        self._allowed.discard((channel, sender))
        return removed

    async def senders(self, channel: str | None = None) -> list[store.SenderRow]:
        return await store.senders(self.d.store, channel)

    async def chat_thread(self, channel: str, chat: str) -> str | None:
        """The thread a chat talks to (None until the person picks one)."""
        return await store.chat_thread(self.d.store, channel, chat)

    async def set_chat_thread(self, channel: str, chat: str, thread_id: str) -> None:
        at = self.d.clock.now_iso()

        async def unit(tx: Tx) -> None:
            await store.set_chat_thread(tx, channel, chat, thread_id, at)

        await self.d.store.write(unit)

    async def listed(self, channel: str) -> list[m.ChannelSender]:
        return [
            m.ChannelSender(channel=r.channel, sender=r.sender, paired_at=r.paired_at, name=r.name)  # type: ignore[arg-type]
            for r in await self.senders(channel)
        ]


__all__ = ["CODE_SECONDS", "Pairing", "PendingCode", "new_code", "normalized"]
