"""What a channel has seen, kept across restarts: a webhook channel (WeCom) refuses a
callback whose nonce it has seen, and handles a message id once, even when alpd restarted in
between (the in-memory guards forget on a restart; these do not).

Each key is written in its own short transaction before the callback is handled (at most
once: a crash between the two loses that message, which WeCom does not retry after a 200).
At most `MOST` keys a channel; each is forgotten after its time (a nonce after twice the
replay window, when its timestamp can no longer pass; a message id after a day).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Final

from alpd.services.context import Daemon
from alpd.store import channels as store
from alpd.store.db import Tx

#: keys kept a channel at most (a nonce or message id is tens of bytes)
MOST: Final = 10_000
#: how long a message id is remembered (WeCom retries a callback within seconds)
MESSAGE_SECONDS: Final = 86_400.0


@dataclass(slots=True)
class SeenKeys:
    d: Daemon
    channel: str

    async def first_time(self, key: str, keep_seconds: float) -> bool:
        """Whether `key` was not seen before (it is now, for `keep_seconds`)."""
        now = time.time()

        async def unit(tx: Tx) -> bool:
            return await store.mark_seen(tx, self.channel, key, now + keep_seconds, now, MOST)

        return await self.d.store.write(unit)


__all__ = ["MESSAGE_SECONDS", "MOST", "SeenKeys"]
