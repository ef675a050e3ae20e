"""Handoffs as the wire shows them, and their notifications.

A handoff is read joined with both threads and its delivery (`alpd.store.conversation.handoffs`
says how its path is told). Shared by `handoff/send`, the inbox and the `handoff/delivered` /
`inbox/changed` notifications.
"""

from __future__ import annotations

from alpd.errors import InboxItemNotFound
from alpd.services.context import Daemon
from alpd.store.conversation.handoffs import find_handoff
from alpd.store.db import Store
from protocol import jsonrpc
from protocol import messages as m


async def handoff_by_id(store: Store, handoff_id: str) -> m.Handoff:
    handoff = await find_handoff(store, handoff_id)
    if handoff is None:
        raise InboxItemNotFound(f"no handoff {handoff_id!r}", id=handoff_id)
    return handoff


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
    "handoff_by_id",
    "publish_delivered",
    "publish_inbox",
]
