"""SQL over `handoffs` (migration V12): the send slots, the inbox and the wire's view.

`handoff/send` (`alpd.services.conversation.handoffs`) decides; each of its units of work
calls these functions with the `Tx` it was given, in its own order: a send's route, chain and
the pair's slots are read and its slot *reserved* in one transaction; the slot is *committed*
in the transaction that stores its delivery (or puts a directive in the inbox), or
*released*.

How a handoff reached its thread is read from the delivery that carried it, the single
record of it: `inject` when the running root took it mid-run, otherwise the path it left by
(`wake`: a root opened for it; `queue`: a round after the running root), with the time and
the execution that received it. While it waits, the path is the one it is on: `inject` when
the delivery is routed to the running root's hook (which takes it mid-run, or hands it to
the next round if the run ends first), so the sender is told what happened, not `queue`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal, NamedTuple

import msgspec

from alpd.domain.conversation.guards import ChainLink, Slot
from alpd.store.db import Store, Tx
from protocol import messages as m

__all__ = [
    "HandoffDelivery",
    "NewHandoff",
    "RouteEnd",
    "abandon_reservations",
    "chain_link",
    "commit_slot",
    "decide_item",
    "find_handoff",
    "handoff_deliveries",
    "hold_in_inbox",
    "inbox_items",
    "insert_handoff",
    "link_delivery",
    "mark_woke",
    "owned_handoff",
    "pair_slots",
    "push_slots",
    "record_confirmed",
    "record_push_chain",
    "release_slot",
    "route_end",
    "thread_handoffs",
]

_SELECT_HANDOFFS: Final = (
    "SELECT h.*, s.title AS source_title, t.title AS target_title, "
    "d.status AS delivery_status, d.route AS delivery_route, "
    "d.execution_id AS delivered_execution_id, d.delivered_at "
    "FROM handoffs h JOIN threads s ON s.id = h.source_thread_id "
    "JOIN threads t ON t.id = h.target_thread_id "
    "LEFT JOIN deliveries d ON d.id = h.delivery_id"
)

_artifacts = msgspec.json.Decoder(list[m.Artifact])


class RouteEnd(NamedTuple):
    """One end of a send's route, as read inside its reserving transaction."""

    owner_uid: int
    status: str


@dataclass(frozen=True, slots=True)
class NewHandoff:
    """A handoff to write with its slot reserved (`artifacts`: their JSON list)."""

    id: str
    owner_uid: int
    source_thread_id: str
    source_execution_id: str | None
    target_thread_id: str
    summary: str
    artifacts: str
    directive: bool
    chain_id: str
    hop: int
    reserved_at: float
    holder: str
    created_at: str


class HandoffDelivery(NamedTuple):
    """A delivery that carried a handoff (or its confirmed directive)."""

    delivery_id: int
    error: str | None
    handoff_id: str | None


def _path(row: sqlite3.Row) -> m.HandoffPath | None:
    recorded: m.HandoffPath | None = row["path"]
    injected = row["delivery_status"] == "injected"
    routed = row["delivery_status"] == "queued" and row["delivery_route"] == "inject"
    return "inject" if injected or routed else recorded


def _handoff(row: sqlite3.Row) -> m.Handoff:
    arrived = row["delivery_status"] in ("delivered", "injected")
    return m.Handoff(
        id=row["id"],
        source_thread_id=row["source_thread_id"],
        target_thread_id=row["target_thread_id"],
        summary=row["summary"],
        directive=bool(row["directive"]),
        chain_id=row["chain_id"],
        hop=row["hop"],
        status=row["status"],
        sent_at=row["created_at"],
        source_title=row["source_title"],
        target_title=row["target_title"],
        source_execution_id=row["source_execution_id"],
        artifacts=_artifacts.decode(row["artifacts"]),
        path=_path(row),
        delivered_at=row["delivered_at"] if arrived else None,
        delivered_execution_id=row["delivered_execution_id"] if arrived else None,
        decided_at=row["decided_at"],
        error=row["error"],
    )


# the wire's view


async def find_handoff(store: Store, handoff_id: str) -> m.Handoff | None:
    row = await store.fetchone(f"{_SELECT_HANDOFFS} WHERE h.id = ?", (handoff_id,))
    return None if row is None else _handoff(row)


async def thread_handoffs(
    store: Store, thread_id: str, direction: Literal["in", "out"], limit: int = 10
) -> list[m.Handoff]:
    """The thread's last `limit` handoffs received (`in`) or sent (`out`), oldest first."""
    column = "h.target_thread_id" if direction == "in" else "h.source_thread_id"
    rows = await store.fetchall(
        f"{_SELECT_HANDOFFS} WHERE {column} = ? ORDER BY h.created_at DESC, h.id DESC LIMIT ?",
        (thread_id, limit),
    )
    return [_handoff(row) for row in reversed(rows)]


async def inbox_items(store: Store, owner_uid: int, thread_id: str | None) -> list[m.Handoff]:
    """The owner's waiting directives (into one thread, if named), oldest first."""
    where = "h.status = 'inbox' AND h.owner_uid = ? AND t.owner_uid = ?"
    args: list[object] = [owner_uid, owner_uid]
    if thread_id is not None:
        where += " AND h.target_thread_id = ?"
        args.append(thread_id)
    rows = await store.fetchall(
        f"{_SELECT_HANDOFFS} WHERE {where} ORDER BY h.created_at, h.id LIMIT 1000", args
    )
    return [_handoff(row) for row in rows]


async def owned_handoff(store: Store, handoff_id: str, owner_uid: int) -> m.Handoff | None:
    """The handoff, if the owner's and into a thread of theirs, whatever its status."""
    row = await store.fetchone(
        f"{_SELECT_HANDOFFS} WHERE h.id = ? AND h.owner_uid = ? AND t.owner_uid = ?",
        (handoff_id, owner_uid, owner_uid),
    )
    return None if row is None else _handoff(row)


# reserving a slot (one unit of the sender's)


async def route_end(tx: Tx, thread_id: str) -> RouteEnd | None:
    async with tx.execute(
        "SELECT id, owner_uid, status FROM threads WHERE id = ?", (thread_id,)
    ) as cur:
        found = await cur.fetchone()
    return None if found is None else RouteEnd(found["owner_uid"], found["status"])


async def chain_link(tx: Tx, execution_id: str, root_id: str) -> ChainLink | None:
    """The chain a run continues: the deepest handoff, or push sent from a run, delivered
    into it or into its root (`root_id`), woken or injected; None when none reached it. Its
    last send is the latest of the chain's handoffs and pushes."""
    async with tx.execute(
        "SELECT h.chain_id, h.hop FROM deliveries d "
        "JOIN handoffs h ON h.id = json_extract(d.origin, '$.handoffId') "
        "WHERE d.execution_id IN (?1, ?2) AND d.status IN ('delivered', 'injected') "
        "UNION ALL SELECT chain_id, hop FROM deliveries WHERE execution_id IN (?1, ?2) "
        "AND status IN ('delivered', 'injected') AND chain_id IS NOT NULL "
        "ORDER BY hop DESC LIMIT 1",
        (execution_id, root_id),
    ) as cur:
        row = await cur.fetchone()
    if row is None:
        return None
    async with tx.execute(
        "SELECT max(at) FROM (SELECT max(reserved_at) AS at FROM handoffs WHERE chain_id = ?1 "
        "UNION ALL SELECT max(sent_at) FROM deliveries WHERE chain_id = ?1) AS hops",
        (row["chain_id"],),
    ) as cur:
        last = await cur.fetchone()
    return ChainLink(row["chain_id"], int(row["hop"]), float(last[0]))  # type: ignore[index]


async def push_slots(
    tx: Tx, source_id: str, target_id: str, since: float, exclude: int | None = None
) -> list[Slot]:
    """The pushes sent from runs of `source_id` into `target_id` at or after `since` (epoch
    seconds), as committed slots of the pair (a failed one never counts); `exclude`: the
    delivery being admitted."""
    async with tx.execute(
        "SELECT id, sent_at FROM deliveries WHERE from_thread_id = ? AND thread_id = ? "
        "AND sent_at >= ? AND status != 'failed' AND id IS NOT ?",
        (source_id, target_id, since, exclude),
    ) as cur:
        rows = await cur.fetchall()
    return [Slot(f"delivery:{r['id']}", float(r["sent_at"]), "committed", "") for r in rows]


async def record_push_chain(
    tx: Tx, delivery_id: int, source_id: str, chain_id: str, hop: int, sent_at: float
) -> None:
    """Record on a push sent from a run where it came from, its chain and hop, and when."""
    await tx.execute(
        "UPDATE deliveries SET from_thread_id = ?, chain_id = ?, hop = ?, sent_at = ? WHERE id = ?",
        (source_id, chain_id, hop, sent_at, delivery_id),
    )


async def pair_slots(tx: Tx, source_id: str, target_id: str, since: float) -> list[Slot]:
    """The pair's slots that may still count: unreleased and reserved, or reserved after
    `since` (times in the future, after the clock was set back, included)."""
    async with tx.execute(
        "SELECT id, reserved_at, slot, holder FROM handoffs "
        "WHERE source_thread_id = ? AND target_thread_id = ? AND slot != 'released' "
        "AND (slot = 'reserved' OR reserved_at > ?)",
        (source_id, target_id, since),
    ) as cur:
        rows = await cur.fetchall()
    return [Slot(r["id"], float(r["reserved_at"]), r["slot"], r["holder"]) for r in rows]


async def abandon_reservations(tx: Tx, handoff_ids: Sequence[str]) -> None:
    """Release reservations whose delivery was never recorded (their daemon stopped)."""
    marks = ", ".join("?" for _ in handoff_ids)
    await tx.execute(
        "UPDATE handoffs SET slot = 'released', status = 'failed', error = "
        "'abandoned: alpd stopped before its delivery was recorded' "
        f"WHERE id IN ({marks}) AND slot = 'reserved'",
        handoff_ids,
    )


async def insert_handoff(tx: Tx, handoff: NewHandoff) -> None:
    await tx.execute(
        "INSERT INTO handoffs (id, owner_uid, source_thread_id, source_execution_id, "
        "target_thread_id, summary, artifacts, directive, chain_id, hop, slot, "
        "reserved_at, holder, status, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'reserved', ?, ?, 'sending', ?)",
        (
            handoff.id,
            handoff.owner_uid,
            handoff.source_thread_id,
            handoff.source_execution_id,
            handoff.target_thread_id,
            handoff.summary,
            handoff.artifacts,
            int(handoff.directive),
            handoff.chain_id,
            handoff.hop,
            handoff.reserved_at,
            handoff.holder,
            handoff.created_at,
        ),
    )


# committing or releasing it


async def commit_slot(tx: Tx, handoff_id: str, delivery_id: int) -> None:
    """Sent: its delivery is stored (in this same transaction)."""
    await tx.execute(
        "UPDATE handoffs SET slot = 'committed', status = 'sent', path = 'queue', "
        "delivery_id = ? WHERE id = ? AND slot = 'reserved'",
        (delivery_id, handoff_id),
    )


async def mark_woke(tx: Tx, handoff_id: str) -> None:
    await tx.execute("UPDATE handoffs SET path = 'wake' WHERE id = ?", (handoff_id,))


async def release_slot(tx: Tx, handoff_id: str, reason: str, *, only_reserved: bool) -> None:
    """Failed, its slot freed; `only_reserved`: unless its slot was committed."""
    await tx.execute(
        "UPDATE handoffs SET slot = 'released', status = 'failed', error = ? "
        "WHERE id = ? AND (? = 0 OR slot = 'reserved')",
        (reason, handoff_id, int(only_reserved)),
    )


async def handoff_deliveries(store: Store, delivery_ids: Sequence[int]) -> list[HandoffDelivery]:
    """Of these deliveries, those of a handoff or a directive."""
    marks = ", ".join("?" for _ in delivery_ids)
    rows = await store.fetchall(
        "SELECT id, error, json_extract(origin, '$.handoffId') AS handoff_id "
        f"FROM deliveries WHERE id IN ({marks}) AND source_kind IN ('handoff', 'directive')",
        delivery_ids,
    )
    return [HandoffDelivery(row["id"], row["error"], row["handoff_id"]) for row in rows]


async def link_delivery(tx: Tx, handoff_id: str, delivery_id: int) -> None:
    await tx.execute(
        "UPDATE handoffs SET delivery_id = ? WHERE id = ? AND delivery_id IS NULL",
        (delivery_id, handoff_id),
    )


# the inbox


async def hold_in_inbox(tx: Tx, handoff_id: str) -> None:
    """A reserved directive waits in the inbox, its slot committed."""
    await tx.execute(
        "UPDATE handoffs SET status = 'inbox', path = 'inbox', slot = 'committed' "
        "WHERE id = ? AND slot = 'reserved'",
        (handoff_id,),
    )


async def decide_item(
    tx: Tx, handoff_id: str, *, before: str, after: str, decided_at: str | None
) -> bool:
    """Move an item from status `before` to `after`: whether it was in `before`."""
    cur = await tx.execute(
        "UPDATE handoffs SET status = ?, decided_at = ? WHERE id = ? AND status = ?",
        (after, decided_at, handoff_id, before),
    )
    return cur.rowcount == 1


async def record_confirmed(tx: Tx, handoff_id: str, path: m.HandoffPath, delivery_id: int) -> None:
    """The path a confirmed directive left by, and its delivery."""
    await tx.execute(
        "UPDATE handoffs SET path = ?, delivery_id = ? WHERE id = ?",
        (path, delivery_id, handoff_id),
    )
