"""SQL over `hosts` (and the host columns of executions and schedules): register a host,
renew its lease, claim one whose lease expired, and what `alp ps` shows of them
(docs/many-machines.md, "Hosts and leases").

Every write is one conditional statement whose WHERE repeats the rule (`lease_until` passed,
not lost already), so of two hosts claiming the same lost host at once exactly one changes a
row, on SQLite (writers serialised) as on an engine with row locks. Times are ISO 8601 UTC
strings in one format (`alpd.clock.iso`), so they compare as text.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from alpd.domain.hosts.lease import HostState
from alpd.store.db import Store, Tx

__all__ = [
    "adopt_unowned",
    "claim_host",
    "come_back",
    "host_by_id",
    "host_in",
    "host_of_execution",
    "hosts",
    "insert_host",
    "renew_lease",
    "unsettled_before",
]

_COLUMNS = "id, name, lease_until, lost_at, lost_to, back_at"


def _time(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value.replace("Z", "+00:00"))


def _state(row: Any) -> HostState:
    until = _time(row["lease_until"])
    assert until is not None
    return HostState(
        id=row["id"],
        name=row["name"],
        lease_until=until,
        lost_at=_time(row["lost_at"]),
        lost_to=row["lost_to"],
        back_at=_time(row["back_at"]),
    )


async def hosts(store: Store) -> list[HostState]:
    """Every host that has used this database, by name."""
    rows = await store.fetchall(f"SELECT {_COLUMNS} FROM hosts ORDER BY name, id")
    return [_state(row) for row in rows]


async def host_by_id(store: Store, host_id: str) -> HostState | None:
    rows = await store.fetchall(f"SELECT {_COLUMNS} FROM hosts WHERE id = ?", (host_id,))
    return _state(rows[0]) if rows else None


async def host_in(tx: Tx, host_id: str) -> HostState | None:
    async with tx.execute(f"SELECT {_COLUMNS} FROM hosts WHERE id = ?", (host_id,)) as cur:
        row = await cur.fetchone()
    return None if row is None else _state(row)


async def host_of_execution(tx: Tx, execution_id: str) -> tuple[str | None, HostState | None]:
    """The host an execution runs on (None: from before hosts), and that host's row."""
    async with tx.execute("SELECT host_id FROM executions WHERE id = ?", (execution_id,)) as cur:
        row = await cur.fetchone()
    host_id = None if row is None else row["host_id"]
    return host_id, None if host_id is None else await host_in(tx, host_id)


async def insert_host(tx: Tx, host_id: str, name: str, at: str, until: str) -> None:
    """A host seen for the first time."""
    await tx.execute(
        "INSERT INTO hosts (id, name, registered_at, renewed_at, lease_until) "
        "VALUES (?, ?, ?, ?, ?)",
        (host_id, name, at, at, until),
    )


async def renew_lease(tx: Tx, host_id: str, name: str, at: str, until: str) -> bool:
    """The lease renewed until `until`; False when the host is lost (another host took it
    over) or has no row: then nothing changed."""
    async with tx.execute(
        "UPDATE hosts SET name = ?, renewed_at = ?, lease_until = ? "
        "WHERE id = ? AND (lost_at IS NULL OR back_at IS NOT NULL)",
        (name, at, until, host_id),
    ) as cur:
        return cur.rowcount == 1


async def come_back(tx: Tx, host_id: str, name: str, at: str, until: str) -> bool:
    """A lost host back, with a fresh lease (its loss stays on record: `lost_at`,
    `lost_to`); False when it was not lost."""
    async with tx.execute(
        "UPDATE hosts SET name = ?, renewed_at = ?, lease_until = ?, back_at = ? "
        "WHERE id = ? AND lost_at IS NOT NULL AND back_at IS NULL",
        (name, at, until, at, host_id),
    ) as cur:
        return cur.rowcount == 1


async def claim_host(tx: Tx, host_id: str, me: str, at: str) -> bool:
    """Host `me` takes over `host_id` if its lease expired before `at` and nobody has yet:
    the host is marked lost to `me` and its schedules move to `me`. False: not claimed
    (renewed meanwhile, or another host was first)."""
    async with tx.execute(
        "UPDATE hosts SET lost_at = ?, lost_to = ?, back_at = NULL "
        "WHERE id = ? AND id != ? AND lease_until <= ? "
        "AND (lost_at IS NULL OR back_at IS NOT NULL)",
        (at, me, host_id, me, at),
    ) as cur:
        if cur.rowcount != 1:
            return False
    await tx.execute("UPDATE schedules SET host_id = ? WHERE host_id = ?", (me, host_id))
    return True


async def adopt_unowned(tx: Tx, host_id: str, name: str) -> None:
    """Unsettled executions and schedules from before hosts (none recorded) become this
    host's: a database upgraded in place had one alpd, the one registering first."""
    await tx.execute(
        "UPDATE executions SET host_id = ?, host_name = ? "
        "WHERE host_id IS NULL AND status != 'settled'",
        (host_id, name),
    )
    await tx.execute("UPDATE schedules SET host_id = ? WHERE host_id IS NULL", (host_id,))


async def unsettled_before(tx: Tx, host_id: str, at: str) -> list[str]:
    """The host's unsettled executions created before `at`, roots first."""
    async with tx.execute(
        "SELECT id FROM executions WHERE host_id = ? AND status != 'settled' "
        "AND created_at <= ? ORDER BY is_root DESC, created_at, id",
        (host_id, at),
    ) as cur:
        return [str(row["id"]) for row in await cur.fetchall()]
