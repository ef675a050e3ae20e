"""Which host may settle, reconcile or cancel an execution when several alpd share one
database (the rule is `alpd.domain.hosts.lease.right_over`; docs/many-machines.md).

Checked inside the unit that settles, so the host rows it reads are the ones the settle
commits against: of a host coming back and another settling its root, one wins.
"""

from __future__ import annotations

from datetime import datetime

from alpd.domain.hosts.lease import HostState, Right, right_over
from alpd.errors import HostLeaseLost, HostNotOwner
from alpd.store.db import Store, Tx
from alpd.store.hosts import host_by_id, host_in
from alpd.store.runs import ExecutionRecord

__all__ = ["check_host_right", "parse_iso", "refuse", "right_in", "right_now"]


def parse_iso(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


async def right_in(tx: Tx, record: ExecutionRecord, me: str) -> tuple[Right, HostState | None]:
    """What host `me` may do with `record`, read in `tx`, and the row of its host."""
    owner = None if record.host_id is None else await host_in(tx, record.host_id)
    taker = None
    if owner is not None and owner.lost_to is not None:
        taker = await host_in(tx, owner.lost_to)
    return right_over(me, record.host_id, parse_iso(record.created_at), owner, taker), owner


async def right_now(
    store: Store, record: ExecutionRecord, me: str, known: dict[str, HostState] | None = None
) -> tuple[Right, HostState | None]:
    """`right_in` outside a unit (reconcile, cancel); `known` hosts are not read again."""
    known = {} if known is None else known

    async def row(host_id: str | None) -> HostState | None:
        if host_id is None:
            return None
        if host_id not in known:
            found = await host_by_id(store, host_id)
            if found is None:
                return None
            known[host_id] = found
        return known[host_id]

    owner = await row(record.host_id)
    taker = await row(owner.lost_to if owner is not None else None)
    return right_over(me, record.host_id, parse_iso(record.created_at), owner, taker), owner


def refuse(
    record: ExecutionRecord, right: Right, owner: HostState | None, *, ending: bool = False
) -> None:
    """HOST_NOT_OWNER for a root another host runs under a live lease (and, `ending` it, for
    one whose host was taken over: no host signals another's processes); HOST_LEASE_LOST for
    one taken from this host; nothing for the others."""
    if right == "orphan" and ending and owner is not None:
        raise HostNotOwner(
            f"execution {record.id} ran on host {owner.name} ({owner.id}), whose lease "
            "expired; it is settled interrupted at the next reconcile here. Its processes, "
            "if any are left, are on that machine: this host never signals them",
            executionId=record.id,
            hostId=owner.id,
            host=owner.name,
        )
    if right == "elsewhere" and owner is not None:
        raise HostNotOwner(
            f"execution {record.id} runs on host {owner.name} ({owner.id}), whose lease lives "
            f"until {owner.lease_until.isoformat()}; settle or cancel it there (`alp` on that "
            "machine), or wait: if that host stops renewing, another settles it interrupted",
            executionId=record.id,
            hostId=owner.id,
            host=owner.name,
        )
    if right == "forfeited" and owner is not None:
        raise HostLeaseLost(
            f"execution {record.id} ran on this host ({owner.name}), whose lease expired: host "
            f"{owner.lost_to} took it over at {owner.lost_at.isoformat() if owner.lost_at else '?'}"
            " and settles it interrupted; what it did after is not recorded. Continue the "
            "thread to run again",
            executionId=record.id,
            hostId=owner.id,
            lostTo=owner.lost_to,
        )


async def check_host_right(tx: Tx, record: ExecutionRecord, me: str) -> None:
    """Refuse (module docstring) a settle of `record` on host `me`: one another host runs,
    one taken from this host, and one already settled by the host that took its host over
    (HOST_LEASE_LOST rather than EXECUTION_SETTLED: the run's result is not recorded)."""
    if record.status == "settled":
        if (
            record.settled_by is not None
            and record.host_id is not None
            and record.settled_by != record.host_id
        ):
            raise HostLeaseLost(
                f"execution {record.id} ran on host {record.host_name or record.host_id}, whose "
                f"lease expired; host {record.settled_by} took it over and settled it "
                f"{record.outcome} at {record.settled_at}. What it did after is not recorded: "
                "continue the thread to run again",
                executionId=record.id,
                settledBy=record.settled_by,
                outcome=record.outcome,
            )
        return
    right, owner = await right_in(tx, record, me)
    refuse(record, right, owner)
