"""Storing a delivery: the one transaction of a submit, before anything is delivered.

In order: the thread's owner must be the sender (PERMISSION_DENIED otherwise: a delivery is
made only into a thread of the user who sent it); a delivery with a `coalesce_key` already
waiting for the thread is not stored twice (the later one joins it); at most `QUEUE_MAX`
deliveries wait per thread (QUEUE_FULL); the path is chosen from the target's state
(`alpd.services.conversation.paths.choose_path`) and recorded as `route`; the row is inserted
`queued` only into an open thread (THREAD_CLOSED otherwise), with the caller's own writes
(`in_unit`) in the same transaction.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final

from alpd.domain.conversation.delivery import Route, Source, fits_injection
from alpd.domain.runs.policy import Origin, SessionKind
from alpd.errors import PermissionDenied, QueueFull, ThreadClosed
from alpd.services.conversation.paths import choose_path
from alpd.store.conversation.delivery import (
    insert_delivery,
    queued_count,
    queued_with_key,
    thread_owner,
)
from alpd.store.db import Tx, Unit

QUEUE_MAX: Final = 1000

#: writes that commit with a stored delivery: (the unit's handle, the delivery's id)
StoredUnit = Callable[[Tx, int], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Submission:
    """One delivery for a thread. `kind` and `origin` are those of the root that will carry
    it; `agent` None means the agent of the thread's last root. `target_execution_id` names
    the run that may take it by injection (None: the thread's running root). Deliveries with
    the same `coalesce_key` are never queued twice for a thread: the later one joins the
    waiting one."""

    thread_id: str
    kind: SessionKind
    origin: Origin
    source: Source
    text: str
    agent: str | None = None
    notify: bool = False
    target_execution_id: str | None = None
    coalesce_key: str | None = None
    #: the uid it is sent for (None: the thread's owner); another owner's thread refuses it
    sender_uid: int | None = None
    #: more writes committed with the stored delivery (given its id), or not at all
    in_unit: StoredUnit | None = None


#: the stored delivery's id, and the path it takes (None: it joined a waiting one)
Stored = tuple[int, Route | None]


def store_delivery(sub: Submission, agent: str, envelope: str, text: str, at: str) -> Unit[Stored]:
    """The store unit of a submit (module docstring): the delivery's id and its route (None:
    it joined a waiting delivery of the same `coalesce_key`). `text` comes secret-filtered."""

    async def unit(tx: Tx) -> Stored:
        owner = await thread_owner(tx, sub.thread_id)
        if owner is not None and sub.sender_uid not in (None, owner):
            raise PermissionDenied(
                f"thread {sub.thread_id} belongs to another user", threadId=sub.thread_id
            )
        if sub.coalesce_key is not None:
            joined = await queued_with_key(tx, sub.thread_id, sub.coalesce_key)
            if joined is not None:
                return joined, None
        waiting = await queued_count(tx, sub.thread_id)
        if waiting >= QUEUE_MAX:
            raise QueueFull(
                f"{waiting} deliveries already wait for thread {sub.thread_id}; "
                "let its running root settle, or cancel it",
                threadId=sub.thread_id,
                limit=QUEUE_MAX,
            )
        route = await choose_path(
            tx, sub.thread_id, sub.target_execution_id, fits=fits_injection(envelope, text)
        )
        inserted = await insert_delivery(
            tx,
            thread_id=sub.thread_id,
            sender_uid=sub.sender_uid,
            kind=sub.kind,
            agent=agent,
            origin=sub.origin,
            source=sub.source,
            envelope=envelope,
            text=text,
            notify=sub.notify,
            target_execution_id=sub.target_execution_id,
            coalesce_key=sub.coalesce_key,
            at=at,
            route=route,
        )
        if inserted is None:
            raise ThreadClosed(
                f"thread {sub.thread_id} is closed or gone; nothing can run in it any more",
                threadId=sub.thread_id,
            )
        if sub.in_unit is not None:
            await sub.in_unit(tx, inserted)
        return inserted, route

    return unit


__all__ = ["QUEUE_MAX", "Stored", "StoredUnit", "Submission", "store_delivery"]
