"""Handoffs as the wire shows them: one row joined with both threads and its delivery.

How a handoff reached its thread is read from the delivery that carried it, the single
record of it: `inject` when the running root took it mid-run, otherwise the path it left by
(`wake`: a root opened for it; `queue`: a round after the running root), with the time and
the execution that received it. While it waits, the path is the one it is on: `inject` when
the delivery is routed to the running root's hook (which takes it mid-run, or hands it to
the next round if the run ends first), so the sender is told what happened, not `queue`.
Shared by `handoff/send`, `thread/show` (handoffs in and out), the inbox and the
`handoff/delivered` / `inbox/changed` notifications.
"""

from __future__ import annotations

import sqlite3
from typing import Final, Literal

import msgspec

from alpd.errors import InboxItemNotFound
from alpd.services.context import Daemon
from alpd.store.db import Store
from protocol import jsonrpc
from protocol import messages as m

SELECT_HANDOFFS: Final = (
    "SELECT h.*, s.title AS source_title, t.title AS target_title, "
    "d.status AS delivery_status, d.route AS delivery_route, "
    "d.execution_id AS delivered_execution_id, d.delivered_at "
    "FROM handoffs h JOIN threads s ON s.id = h.source_thread_id "
    "JOIN threads t ON t.id = h.target_thread_id "
    "LEFT JOIN deliveries d ON d.id = h.delivery_id"
)

_artifacts = msgspec.json.Decoder(list[m.Artifact])


def _path(row: sqlite3.Row) -> m.HandoffPath | None:
    recorded: m.HandoffPath | None = row["path"]
    injected = row["delivery_status"] == "injected"
    routed = row["delivery_status"] == "queued" and row["delivery_route"] == "inject"
    return "inject" if injected or routed else recorded


def handoff_from_row(row: sqlite3.Row) -> m.Handoff:
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


async def handoff_by_id(store: Store, handoff_id: str) -> m.Handoff:
    row = await store.fetchone(f"{SELECT_HANDOFFS} WHERE h.id = ?", (handoff_id,))
    if row is None:
        raise InboxItemNotFound(f"no handoff {handoff_id!r}", id=handoff_id)
    return handoff_from_row(row)


async def thread_handoffs(
    store: Store, thread_id: str, direction: Literal["in", "out"], limit: int = 10
) -> list[m.Handoff]:
    """The thread's last `limit` handoffs received (`in`) or sent (`out`), oldest first."""
    column = "h.target_thread_id" if direction == "in" else "h.source_thread_id"
    rows = await store.fetchall(
        f"{SELECT_HANDOFFS} WHERE {column} = ? ORDER BY h.created_at DESC, h.id DESC LIMIT ?",
        (thread_id, limit),
    )
    return [handoff_from_row(row) for row in reversed(rows)]


def publish_delivered(daemon: Daemon, handoff: m.Handoff) -> None:
    frame = jsonrpc.encode_notification("handoff/delivered", m.HandoffDelivered(handoff=handoff))
    daemon.events.publish("handoff/delivered", frame, handoff.target_thread_id)


def publish_inbox(daemon: Daemon, item: m.Handoff, change: str) -> None:
    frame = jsonrpc.encode_notification(
        "inbox/changed",
        m.InboxChanged(item=item, change=change),  # type: ignore[arg-type]
    )
    daemon.events.publish("inbox/changed", frame, item.target_thread_id)


__all__ = [
    "SELECT_HANDOFFS",
    "handoff_by_id",
    "handoff_from_row",
    "publish_delivered",
    "publish_inbox",
    "thread_handoffs",
]
