"""Where a channel's poll stands, kept so a restart handles no update twice.

The cursor moves before the update it passes is handled (at most once: a kill -9 between
the two loses that one message, which the person sees unanswered; it never runs twice).
"""

from __future__ import annotations

from dataclasses import dataclass

from alpd.services.context import Daemon
from alpd.store import channels as store
from alpd.store.db import Tx


@dataclass(slots=True)
class PollCursor:
    d: Daemon
    channel: str
    account: str

    async def load(self) -> int | None:
        return await store.poll_cursor(self.d.store, self.channel, self.account)

    async def advance(self, next_offset: int) -> None:
        async def unit(tx: Tx) -> None:
            await store.set_poll_cursor(tx, self.channel, self.account, next_offset)

        await self.d.store.write(unit)


__all__ = ["PollCursor"]
