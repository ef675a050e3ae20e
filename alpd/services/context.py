"""What every use case receives: who is calling, and the daemon's shared parts."""

from __future__ import annotations

from dataclasses import dataclass

from alpd.clock import Clock
from alpd.events import EventBus
from alpd.store.db import Store


@dataclass(frozen=True, slots=True)
class Caller:
    """The peer, from kernel credentials read once at accept (never from message text).

    `uid` is the number the caller's rows are owned by: the peer's uid (checked equal to
    alpd's at accept) mapped to its person's number (`Daemon.owner`; the same on one host)."""

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
    #: this alpd's host (its id and name, `alpd.services.hosts`): set when it registers;
    #: None before (and in a daemon made for a test without hosts)
    host_id: str | None = None
    host_name: str | None = None
    #: the person this alpd's rows belong to and their number (`owner_uid`): set at start
    #: (`alpd.services.hosts.person`); until then, and on one host, the number is `uid`
    person: str | None = None
    owner: int = -1

    def __post_init__(self) -> None:
        if self.owner < 0:
            self.owner = self.uid

    @property
    def host(self) -> tuple[str, str] | None:
        """(id, name) of this alpd's host once registered, for the rows it writes."""
        if self.host_id is None or self.host_name is None:
            return None
        return self.host_id, self.host_name
