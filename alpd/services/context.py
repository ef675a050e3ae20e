"""What every use case receives: who is calling, and the daemon's shared parts."""

from __future__ import annotations

from dataclasses import dataclass

from alpd.clock import Clock
from alpd.events import EventBus
from alpd.store.db import Store


@dataclass(frozen=True, slots=True)
class Caller:
    """The peer, from kernel credentials read once at accept (never from message text)."""

    uid: int
    gid: int
    pid: int


@dataclass(slots=True)
class Daemon:
    """The shared parts the services use."""

    store: Store
    events: EventBus
    clock: Clock
    uid: int
