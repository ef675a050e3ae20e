"""SQL of delivery (`alpd.services.conversation.delivery`): storing a delivery, the rounds
that carry queued ones, the lease and acknowledgement of an injection, and what a background
root reads of its thread.

Functions taking a `Tx` run inside a unit of work the service decides (the submit, a round's
claim, the lease of `delivery/pending`, an ack); those taking the `Store` are reads of their
own.
"""

# long: every statement of the one delivery queue (store, route, claim, ack, give back),
# read side by side; a split by job is issue-worthy, not a side edit.

from __future__ import annotations

from typing import Final, NamedTuple

import msgspec

from alpd.domain.conversation.delivery import Queued, Route, Source
from alpd.domain.runs.policy import Origin, SessionKind
from alpd.store.db import Store, Tx
from protocol import messages as m

__all__ = [
    "DeliveryState",
    "LiveRun",
    "Run",
    "ThreadState",
    "WaitingDelivery",
    "claim_round",
    "delivery_state",
    "fail_queued",
    "insert_delivery",
    "last_root_agent",
    "last_root_policy",
    "leasable",
    "lease",
    "mark_injected",
    "note_asked",
    "queued_count",
    "queued_for_round",
    "queued_with_key",
    "requeue_unconfirmed",
    "requeue_unstarted",
    "root_running",
    "root_thread",
    "run_held",
    "set_hold",
    "thread_owner",
    "thread_state",
    "thread_workspace",
    "threads_with_queued",
    "unsettled_run",
    "waiting_count",
]

_QUEUED_COUNT: Final = "SELECT count(*) FROM deliveries WHERE thread_id = ? AND status = 'queued'"

#: why a round carries a delivery that was meant for another path (SQL over the row): taken
#: by a run that ended before its model worked (`requeue_unconfirmed`), handed out but never
#: acknowledged, or offered to a live run that ended first
_FALLBACK_NOTE: Final = (
    "CASE WHEN note LIKE 'taken mid-run by %' THEN note "
    "WHEN lease_execution_id IS NOT NULL THEN 'handed to ' || lease_execution_id || "
    "' by its hook, never acknowledged; delivered by this round' "
    "WHEN route = 'inject' THEN 'offered to the running root, which ended before its hook "
    "took it; delivered by this round' END"
)


def _marks(ids: list[int]) -> str:
    return ", ".join("?" for _ in ids)


# storing a delivery (the submit unit)


async def thread_owner(tx: Tx, thread_id: str) -> int | None:
    """The uid owning the thread (None: no such thread)."""
    async with tx.execute("SELECT owner_uid FROM threads WHERE id = ?", (thread_id,)) as cur:
        owner = await cur.fetchone()
    return int(owner["owner_uid"]) if owner is not None else None


async def queued_with_key(tx: Tx, thread_id: str, coalesce_key: str) -> int | None:
    """The delivery of `coalesce_key` waiting for the thread, if one does."""
    async with tx.execute(
        "SELECT id FROM deliveries WHERE thread_id = ? AND coalesce_key = ? AND status = 'queued'",
        (thread_id, coalesce_key),
    ) as cur:
        row = await cur.fetchone()
    return int(row["id"]) if row is not None else None


async def queued_count(tx: Tx, thread_id: str) -> int:
    """How many deliveries wait for the thread."""
    async with tx.execute(_QUEUED_COUNT, (thread_id,)) as cur:
        row = await cur.fetchone()
    return int(row[0]) if row is not None else 0


class LiveRun(NamedTuple):
    """A run a delivery may reach mid-work, as the path rules need it."""

    runtime: str
    #: it said not to be interrupted (`delivery/hold`)
    held: bool
    #: it has asked `delivery/pending` itself (its hook, or a program that asks)
    asked: bool


async def unsettled_run(tx: Tx, thread_id: str, target: str | None) -> LiveRun | None:
    """Execution `target` if it has not settled, or (`target` None) the thread's unsettled
    root; None when there is no such run."""
    async with tx.execute(
        "SELECT e.runtime, r.held_at IS NOT NULL AS held, r.asked_at IS NOT NULL AS asked "
        "FROM executions e LEFT JOIN delivery_runs r ON r.execution_id = e.id "
        "WHERE e.status != 'settled' AND "
        + ("e.id = ?" if target else "e.thread_id = ? AND e.is_root = 1"),
        (target or thread_id,),
    ) as cur:
        running = await cur.fetchone()
    if running is None:
        return None
    return LiveRun(str(running["runtime"]), bool(running["held"]), bool(running["asked"]))


async def insert_delivery(
    tx: Tx,
    *,
    thread_id: str,
    sender_uid: int | None,
    kind: SessionKind,
    agent: str,
    origin: Origin,
    source: Source,
    envelope: str,
    text: str,
    notify: bool,
    target_execution_id: str | None,
    coalesce_key: str | None,
    at: str,
    route: Route,
) -> int | None:
    """Insert the delivery `queued` into the thread if it is open (owned by `sender_uid`, or
    by the thread's owner); its id, or None when the thread is closed or gone."""
    async with tx.execute(
        "INSERT INTO deliveries (thread_id, owner_uid, kind, agent, origin, source_kind, "
        "source, envelope, text, notify, target_execution_id, coalesce_key, status, "
        "created_at, route) "
        "SELECT id, coalesce(?, owner_uid), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ? "
        "FROM threads WHERE id = ? AND status = 'open' RETURNING id",
        (
            sender_uid,
            kind,
            agent,
            msgspec.json.encode(origin).decode(),
            source.kind,
            source.label,
            envelope,
            text,
            int(notify),
            target_execution_id,
            coalesce_key,
            at,
            route,
            thread_id,
        ),
    ) as cur:
        inserted = await cur.fetchone()
    return int(inserted["id"]) if inserted is not None else None


class DeliveryState(NamedTuple):
    status: str
    #: the execution that took it (None while it waits, or when it failed)
    execution_id: str | None


async def delivery_state(store: Store, delivery_id: int) -> DeliveryState | None:
    row = await store.fetchone(
        "SELECT status, execution_id FROM deliveries WHERE id = ?", (delivery_id,)
    )
    return DeliveryState(row["status"], row["execution_id"]) if row is not None else None


async def waiting_count(store: Store, thread_id: str) -> int:
    """How many deliveries wait for the thread (a read of its own: `queued_count` in a unit)."""
    row = await store.fetchone(_QUEUED_COUNT, (thread_id,))
    return int(row[0]) if row is not None else 0


# rounds (wake, queue)


async def root_running(store: Store, thread_id: str) -> bool:
    """Whether the thread has an unsettled root."""
    busy = await store.fetchone(
        "SELECT 1 FROM executions WHERE thread_id = ? AND is_root = 1 AND status != 'settled'",
        (thread_id,),
    )
    return busy is not None


class WaitingDelivery(NamedTuple):
    """A queued delivery as a round reads it."""

    queued: Queued
    #: the origin of the root that carries it (JSON of `Origin`)
    origin: str
    #: made for the uid that owns the thread now
    same_owner: bool


async def queued_for_round(store: Store, thread_id: str, limit: int) -> list[WaitingDelivery]:
    """The thread's first `limit` queued deliveries, oldest first."""
    rows = await store.fetchall(
        "SELECT d.id, d.kind, d.agent, d.envelope, d.text, d.notify, d.origin, "
        "d.owner_uid = t.owner_uid AS same_owner FROM deliveries d "
        "JOIN threads t ON t.id = d.thread_id "
        "WHERE d.thread_id = ? AND d.status = 'queued' ORDER BY d.id LIMIT ?",
        (thread_id, limit),
    )
    return [
        WaitingDelivery(
            Queued(r["id"], r["kind"], r["agent"], r["envelope"], r["text"], bool(r["notify"])),
            r["origin"],
            bool(r["same_owner"]),
        )
        for r in rows
    ]


async def claim_round(tx: Tx, ids: list[int], execution_id: str, at: str) -> int:
    """Mark the deliveries still queued among `ids` delivered by root `execution_id` (how
    `wake` or `queue` by their route, a note when they were meant for a live run); how many
    it marked."""
    cur = await tx.execute(
        "UPDATE deliveries SET status = 'delivered', execution_id = ?, delivered_at = ?, "
        "how = CASE route WHEN 'wake' THEN 'wake' ELSE 'queue' END, "
        f"note = coalesce({_FALLBACK_NOTE}, note) "
        f"WHERE id IN ({_marks(ids)}) AND status = 'queued'",
        (execution_id, at, *ids),
    )
    return cur.rowcount


async def fail_queued(tx: Tx, ids: list[int], reason: str) -> None:
    """Mark the deliveries still queued among `ids` failed, with `reason`."""
    await tx.execute(
        f"UPDATE deliveries SET status = 'failed', error = ? "
        f"WHERE id IN ({_marks(ids)}) AND status = 'queued'",
        (reason, *ids),
    )


async def root_thread(store: Store, execution_id: str) -> str | None:
    """The thread of execution `execution_id` when it is a thread's root, else None."""
    row = await store.fetchone(
        "SELECT thread_id, is_root FROM executions WHERE id = ?", (execution_id,)
    )
    if row is not None and row["is_root"] and row["thread_id"] is not None:
        return str(row["thread_id"])
    return None


async def requeue_unstarted(tx: Tx, execution_id: str | None) -> int:
    """Deliveries of rounds whose root was reserved but never started (settled `interrupted`
    with no process ever recorded) back to the queue; how many. Of one root, or (None) of
    all. `OR IGNORE`: a scheduled fire whose schedule already has another fire waiting (the
    coalescing index) stays where it is."""
    scope, args = ("= ?", (execution_id,)) if execution_id else ("IS NOT NULL", ())
    cur = await tx.execute(
        "UPDATE OR IGNORE deliveries SET status = 'queued', execution_id = NULL, "
        "delivered_at = NULL, how = NULL, note = 'root ' || execution_id || "
        "' was reserved for it but never started (alpd stopped first); re-queued' "
        f"WHERE status = 'delivered' AND execution_id {scope} AND execution_id IN ("
        "SELECT id FROM executions WHERE is_root = 1 AND headless = 1 AND pid IS NULL "
        "AND status = 'settled' AND outcome = 'interrupted') "
        # what OR IGNORE skips, said for PostgreSQL (which has no OR IGNORE on an UPDATE):
        # a row whose coalesce key is queued again already stays as it is
        "AND (coalesce_key IS NULL OR NOT EXISTS (SELECT 1 FROM deliveries q "
        "WHERE q.thread_id = deliveries.thread_id AND q.coalesce_key = deliveries.coalesce_key "
        "AND q.status = 'queued'))",
        args,
    )
    return cur.rowcount


async def threads_with_queued(store: Store) -> list[str]:
    """Every thread some delivery waits for."""
    rows = await store.fetchall("SELECT DISTINCT thread_id FROM deliveries WHERE status = 'queued'")
    return [row["thread_id"] for row in rows]


# inject: the lease of `delivery/pending`, the acknowledgement


class Run(NamedTuple):
    """The run asking for what waits for it."""

    execution_id: str
    thread_id: str
    is_root: bool
    owner_uid: int


async def leasable(tx: Tx, run: Run, at: str, limit: int) -> list[m.PendingDelivery]:
    """At most `limit` deliveries the run may take, oldest first, that hold no live lease at
    `at`: its own (a sub-agent's result targets its parent, any other delivery the thread's
    root), made for its owner, in a thread of that owner (a thread that changed hands after a
    send never receives it)."""
    async with tx.execute(
        "SELECT id, source_kind, envelope, text, created_at FROM deliveries WHERE "
        "thread_id = ? AND status = 'queued' AND "
        "(target_execution_id = ? OR (target_execution_id IS NULL AND ? = 1)) AND "
        "owner_uid = ? AND owner_uid = (SELECT owner_uid FROM threads WHERE id = ?) "
        "AND (lease_until IS NULL OR lease_until <= ?) ORDER BY id LIMIT ?",
        (
            run.thread_id,
            run.execution_id,
            int(run.is_root),
            run.owner_uid,
            run.thread_id,
            at,
            limit,
        ),
    ) as cur:
        found = list(await cur.fetchall())
    return [
        m.PendingDelivery(
            id=row["id"],
            source_kind=row["source_kind"],
            envelope=row["envelope"],
            text=row["text"],
            at=row["created_at"],
        )
        for row in found
    ]


async def lease(tx: Tx, ids: list[int], execution_id: str, until: str) -> None:
    """Lease the deliveries `ids` to the run until `until`."""
    await tx.execute(
        "UPDATE deliveries SET lease_execution_id = ?, lease_until = ? "
        f"WHERE id IN ({_marks(ids)})",
        (execution_id, until, *ids),
    )


async def mark_injected(tx: Tx, ids: list[int], execution_id: str, at: str) -> list[int]:
    """Record injected by the run those of `ids` still queued and leased to it; their ids,
    ascending."""
    async with tx.execute(
        "UPDATE deliveries SET status = 'injected', how = 'inject', execution_id = ?, "
        "delivered_at = ?, lease_until = NULL "
        f"WHERE id IN ({_marks(ids)}) AND status = 'queued' AND lease_execution_id = ? "
        "RETURNING id",
        (execution_id, at, *ids, execution_id),
    ) as cur:
        return sorted(int(row["id"]) for row in await cur.fetchall())


# how a run takes deliveries: its hold, its hook's last call


async def set_hold(tx: Tx, execution_id: str, at: str | None) -> None:
    """The run says don't interrupt (`at`: since when) or takes deliveries again (None)."""
    await tx.execute(
        "INSERT INTO delivery_runs (execution_id, held_at) VALUES (?, ?) "
        "ON CONFLICT (execution_id) DO UPDATE SET held_at = excluded.held_at",
        (execution_id, at),
    )


async def run_held(tx: Tx, execution_id: str) -> bool:
    async with tx.execute(
        "SELECT 1 FROM delivery_runs WHERE execution_id = ? AND held_at IS NOT NULL",
        (execution_id,),
    ) as cur:
        return await cur.fetchone() is not None


async def note_asked(tx: Tx, execution_id: str, at: str) -> None:
    """The run asked `delivery/pending` at `at` (its model worked since its last ack)."""
    await tx.execute(
        "INSERT INTO delivery_runs (execution_id, asked_at) VALUES (?, ?) "
        "ON CONFLICT (execution_id) DO UPDATE SET asked_at = excluded.asked_at",
        (execution_id, at),
    )


async def requeue_unconfirmed(tx: Tx, execution_id: str) -> int:
    """Deliveries recorded injected into settled execution `execution_id` that its model
    provably never worked on — the run did not complete, and its hook was not called again
    after the acknowledgement (a Claude run that failed at login after its prompt hook) —
    back to the queue, with a note; how many. The next round carries them."""
    cur = await tx.execute(
        "UPDATE deliveries SET status = 'queued', execution_id = NULL, delivered_at = NULL, "
        "how = NULL, note = 'taken mid-run by ' || execution_id || ', which ended (' || "
        "(SELECT outcome FROM executions WHERE id = ?1) || ') before its model worked on "
        "it; delivered by this round' "
        "WHERE execution_id = ?1 AND status = 'injected' AND EXISTS (SELECT 1 FROM executions "
        "WHERE id = ?1 AND status = 'settled' AND coalesce(outcome, '') != 'completed') "
        "AND delivered_at > coalesce((SELECT asked_at FROM delivery_runs "
        "WHERE execution_id = ?1), '')",
        (execution_id,),
    )
    return cur.rowcount


# what a background root reads of its thread (wake)


async def last_root_agent(store: Store, thread_id: str) -> str | None:
    """The agent of the thread's last root (None: no root yet)."""
    row = await store.fetchone(
        "SELECT agent FROM executions WHERE thread_id = ? AND is_root = 1 "
        "ORDER BY sequence DESC LIMIT 1",
        (thread_id,),
    )
    return str(row["agent"]) if row is not None else None


async def last_root_policy(store: Store, thread_id: str) -> bytes | None:
    """The stored policy document of the thread's last root (None: no root yet)."""
    row = await store.fetchone(
        "SELECT policy FROM executions WHERE thread_id = ? AND is_root = 1 "
        "ORDER BY sequence DESC LIMIT 1",
        (thread_id,),
    )
    return bytes(row["policy"]) if row is not None else None


async def thread_workspace(store: Store, thread_id: str) -> str | None:
    row = await store.fetchone("SELECT workspace FROM threads WHERE id = ?", (thread_id,))
    return str(row["workspace"]) if row is not None else None


class ThreadState(NamedTuple):
    id: str
    owner_uid: int
    status: str


async def thread_state(store: Store, thread_id: str) -> ThreadState | None:
    row = await store.fetchone(
        "SELECT id, owner_uid, status FROM threads WHERE id = ?", (thread_id,)
    )
    return ThreadState(row["id"], row["owner_uid"], row["status"]) if row is not None else None
