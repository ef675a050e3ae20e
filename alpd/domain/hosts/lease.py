"""A host's lease, and who may settle a root (docs/many-machines.md, "Hosts and leases").

Each alpd is a host: a stable id kept in its home and a name. It renews its lease every
third of the lease's length; a lease not renewed by `lease_until` has expired, and the first
other host to see it claims the host (`lost_at`, `lost_to`) in one transaction. From then on
the host is *lost* until it comes back and says so (`back_at`): the host that took it over
settles its unsettled roots `interrupted` and fires its schedules.

Who may settle or reconcile a root (`right_over`): the host that runs it (`own`; a root from
before hosts, with none recorded, is anybody's, as it was); another host only once the owner
was taken over after the root began (`orphan`: settle it `interrupted`, never signal it);
otherwise nobody else (`elsewhere`: leave it to its owner, and refuse a settle or a cancel
asked here). The host a root was taken from leaves it alone (`forfeited`): a late settle of
it there is HOST_LEASE_LOST.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Final, Literal

import msgspec

from alpd.domain.config_fields import Failer
from alpd.domain.runs.limits import parse_timeout

__all__ = [
    "DEFAULT_LEASE_SECONDS",
    "MAX_LEASE_SECONDS",
    "MIN_LEASE_SECONDS",
    "HostSettings",
    "HostState",
    "Right",
    "is_lost",
    "lease_until",
    "may_take_over",
    "parse_host_settings",
    "renew_every",
    "right_over",
]

#: the lease's length unless `[host] lease` says otherwise: a host killed or cut off is taken
#: over this long (plus at most one renewal interval of the taker) after its last renewal
DEFAULT_LEASE_SECONDS: Final = 30
MIN_LEASE_SECONDS: Final = 1
MAX_LEASE_SECONDS: Final = 3600

HOST_KEYS: Final = ("name", "lease")
MAX_NAME_CHARS: Final = 64

Right = Literal["own", "orphan", "elsewhere", "forfeited"]


class HostSettings(msgspec.Struct, frozen=True, kw_only=True):
    """`[host]`: the name this host goes by (None: the machine's hostname) and its lease."""

    name: str | None = None
    lease_seconds: int = DEFAULT_LEASE_SECONDS


class HostState(msgspec.Struct, frozen=True, kw_only=True):
    """One host's row: its lease, and whether another host has taken it over."""

    id: str
    name: str
    lease_until: datetime
    #: when another host claimed it (its lease had expired); None: never, or back since
    lost_at: datetime | None = None
    lost_to: str | None = None
    #: when it came back after its last loss
    back_at: datetime | None = None


def lease_until(now: datetime, lease_seconds: int) -> datetime:
    """When a lease renewed at `now` expires."""
    return now + timedelta(seconds=lease_seconds)


def renew_every(lease_seconds: int) -> float:
    """Seconds between two renewals (and two looks at the other hosts): a third of the
    lease, so two renewals may fail (a busy database, a slow disk) before it expires."""
    return lease_seconds / 3


def is_lost(host: HostState) -> bool:
    """Taken over by another host, and not back since."""
    return host.lost_at is not None and host.back_at is None


def may_take_over(me: str, host: HostState, now: datetime) -> bool:
    """Whether host `me` may claim `host`: another host, not lost already, whose lease has
    expired (the claim itself is one transaction that repeats this test)."""
    return host.id != me and not is_lost(host) and now >= host.lease_until


def right_over(
    me: str,
    runs_on: str | None,
    created_at: datetime,
    owner: HostState | None,
    taker: HostState | None,
) -> Right:
    """What host `me` may do with an unsettled root created at `created_at` on host
    `runs_on`, whose row is `owner` (None: it has none); `taker` is the row of the host that
    last took `owner` over (`owner.lost_to`).

    A root is *taken* when its host was claimed after the root began (`created_at` at or
    before `lost_at`): whichever host looks settles it `interrupted` (`orphan`), except the
    host it ran on, which leaves it to the others (`forfeited`) — unless the taker is itself
    lost, when nobody else is left to do it."""
    if runs_on is None:
        return "own"
    if owner is None:
        return "own" if runs_on == me else "orphan"
    taken = owner.lost_at is not None and created_at <= owner.lost_at
    if not taken:
        return "own" if runs_on == me else "elsewhere"
    if runs_on != me or taker is None or is_lost(taker):
        return "orphan"
    return "forfeited"


def parse_host_settings(fail: Failer, table: object) -> HostSettings:
    """HostSettings from `[host]` (None when config.toml has none)."""
    if table is None:
        return HostSettings()
    if not isinstance(table, dict):
        fail(("host",), "host must be a table")
    for key in table:
        if key not in HOST_KEYS:
            fail(("host", key), f"unknown key {key!r} in [host] (known: {', '.join(HOST_KEYS)})")
    name = table.get("name")
    if name is not None and (
        not isinstance(name, str)
        or not name.strip()
        or len(name) > MAX_NAME_CHARS
        or not name.isprintable()
    ):
        fail(
            ("host", "name"),
            f"host.name must be a printable name of 1 to {MAX_NAME_CHARS} characters; leave "
            "it out for the machine's hostname",
        )
    lease = table.get("lease", DEFAULT_LEASE_SECONDS)
    try:
        if isinstance(lease, bool) or not isinstance(lease, (str, int)):
            raise ValueError
        seconds = parse_timeout(str(lease))
    except ValueError:
        seconds = 0
    if not MIN_LEASE_SECONDS <= seconds <= MAX_LEASE_SECONDS:
        fail(
            ("host", "lease"),
            f"host.lease must be a duration from {MIN_LEASE_SECONDS}s to "
            f'{MAX_LEASE_SECONDS // 60}m (e.g. "30s")',
        )
    return HostSettings(name=name.strip() if isinstance(name, str) else None, lease_seconds=seconds)
