"""The daemon's clock and id source, the only places that read time and entropy.

Injected into services so tests can pin them; the domain never calls these itself.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime

from alpd.domain.ids import make_id


class Clock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    def now_iso(self) -> str:
        return iso(self.now())

    def monotonic(self) -> float:
        return time.monotonic()

    def new_id(self, prefix: str) -> str:
        return make_id(prefix, time.time_ns() // 1_000_000, os.urandom(10))


def iso(moment: datetime) -> str:
    """ISO 8601 in UTC with milliseconds and a Z, the one time format alp stores and sends."""
    return (
        moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    )
