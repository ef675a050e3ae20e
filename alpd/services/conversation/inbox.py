"""The inbox: directive handoffs wait here for the person, never for an agent; so do the
memories runs propose (its second kind of item, `alpd.services.memory.proposals`).

A handoff marked `directive` asks its target to act. Another thread's agent must not be able
to order this one around, so such a handoff is not delivered: `hold` puts it in the target's
inbox (its send slot is committed: it was delivered, to the person), announces it
(`inbox/changed`, and a desktop notification where the machine has one) and it waits.

- `inbox/list`: the caller's waiting items, oldest first (of one thread, or of all);
- `inbox/confirm ID`: the person read it and takes it as their own words. It is delivered
  through the one delivery path under a `directive` envelope that says so; ownership and the
  target's state are checked again first (`HANDOFF_DENIED`). If the delivery fails, the item
  goes back to waiting;
- `inbox/dismiss ID`: dropped; the record stays on both threads.

An item that is not the caller's, or no longer waits, is `INBOX_ITEM_NOT_FOUND`: another
user's inbox is not even confirmed to exist. Confirming and dismissing are the person's:
asked from inside a run (its cgroup, process ancestry or label: `run_of_caller`) they are
`NOT_FROM_A_RUN`, or an agent could wave through what another thread asked of it.

A memory proposal (id `prop_…`) is listed in `proposals` and confirmed into a memory by
`inbox/confirm`, under the same rule; it is dropped by `memory/dismiss` (`inbox/dismiss`
answers a bare handoff, a shape old clients rely on).
"""

from __future__ import annotations

import anyio

from alpd.desktop import notify_desktop
from alpd.domain.conversation.delivery import Source
from alpd.domain.conversation.guards import check_route
from alpd.domain.conversation.handoff import Artifact, handoff_text, source_label
from alpd.domain.runs.policy import Origin
from alpd.errors import InboxItemNotFound, InvalidArgument
from alpd.services.context import Caller, Daemon
from alpd.services.conversation.delivery import DeliveryService, Submission
from alpd.services.conversation.handoff_rows import handoff_by_id, publish_inbox
from alpd.services.memory.proposals import Proposals, is_proposal
from alpd.services.runs.callers import refuse_runs
from alpd.services.threads.refs import resolve_thread
from alpd.store.conversation import handoffs as store
from alpd.store.db import Tx
from protocol import messages as m


async def hold(daemon: Daemon, handoff_id: str) -> None:
    """Put a reserved directive handoff into its target's inbox (its slot committed)."""

    async def unit(tx: Tx) -> None:
        await store.hold_in_inbox(tx, handoff_id)

    await daemon.store.write(unit)
    item = await handoff_by_id(daemon.store, handoff_id)
    publish_inbox(daemon, item, "added")
    await notify_desktop(
        f"alp: a handoff waits in {item.target_title or 'a thread'}'s inbox",
        f"from {source_label(item.source_title)}: {item.summary[:200]}\n"
        f"alp inbox confirm {item.id}  ·  alp inbox dismiss {item.id}",
    )


class Inbox:
    def __init__(self, delivery: DeliveryService, proposals: Proposals) -> None:
        self.delivery = delivery
        self.proposals = proposals
        self.d = delivery.d

    async def list(self, caller: Caller, params: m.InboxListParams) -> m.InboxListResult:
        thread_id = None
        if params.thread is not None:
            thread = await resolve_thread(self.d.store, caller, params.thread)
            thread_id = thread.id
        return m.InboxListResult(
            items=await store.inbox_items(self.d.store, caller.uid, thread_id),
            proposals=await self.proposals.waiting(caller, thread_id),
        )

    async def _waiting(self, caller: Caller, item_id: str) -> m.Handoff:
        item = await store.owned_handoff(self.d.store, item_id, caller.uid)
        if item is None or item.status != "inbox":
            state = "" if item is None else f" (it is {item.status})"
            raise InboxItemNotFound(
                f"no item {item_id!r} waits in your inbox{state}; `alp inbox` lists them",
                id=item_id,
            )
        return item

    async def _decide(self, item_id: str, status: str, *, undo: bool = False) -> bool:
        at = self.d.clock.now_iso()
        before, after = (status, "inbox") if undo else ("inbox", status)

        async def unit(tx: Tx) -> bool:
            return await store.decide_item(
                tx, item_id, before=before, after=after, decided_at=None if undo else at
            )

        return await self.d.store.write(unit)

    async def _refuse_runs(self, caller: Caller, item_id: str) -> None:
        await refuse_runs(
            self.d.store, caller, f"decide inbox item {item_id} (`alp inbox` is the person's)"
        )

    async def confirm(
        self, caller: Caller, params: m.InboxItemRef, door: str = "inbox"
    ) -> m.InboxConfirmResult:
        await self._refuse_runs(caller, params.id)
        if is_proposal(params.id):
            return await self.proposals.confirm(caller, params.id, door)
        item = await self._waiting(caller, params.id)
        target = await resolve_thread(self.d.store, caller, item.target_thread_id)
        source = await resolve_thread(self.d.store, caller, item.source_thread_id)
        check_route(
            caller_uid=caller.uid,
            source_id=source.id,
            source_owner=source.owner_uid,
            target_id=target.id,
            target_owner=target.owner_uid,
            target_status=target.status,
        )
        if not await self._decide(params.id, "confirmed"):
            await self._waiting(caller, params.id)  # says what it is now
        label = source_label(source.title)
        artifacts = [Artifact(a.path, a.size, a.sha256) for a in item.artifacts]
        try:
            submitted = await self.delivery.submit(
                Submission(
                    thread_id=target.id,
                    kind="push",
                    origin=Origin(
                        door="inbox",
                        by=f"uid:{caller.uid}",
                        push_source=f"handoff from {label}, confirmed",
                        handoff_id=params.id,
                        purpose="confirmed handoff",
                    ),
                    source=Source(kind="directive", label=label, at=self.d.clock.now_iso()),
                    text=handoff_text(item.summary, artifacts, label),
                    notify=True,
                    sender_uid=caller.uid,
                ),
                requested_by=caller,
            )
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self._decide(params.id, "confirmed", undo=True)
            raise

        async def unit(tx: Tx) -> None:
            path: m.HandoffPath = "wake" if submitted.status == "started" else "queue"
            await store.record_confirmed(tx, params.id, path, submitted.delivery_id)

        await self.d.store.write(unit)
        confirmed = await handoff_by_id(self.d.store, params.id)
        publish_inbox(self.d, confirmed, "confirmed")
        return m.InboxConfirmResult(item=confirmed, execution=submitted.execution)

    async def dismiss(self, caller: Caller, params: m.InboxItemRef) -> m.Handoff:
        await self._refuse_runs(caller, params.id)
        if is_proposal(params.id):
            raise InvalidArgument(
                f"{params.id} is a memory proposal: memory/dismiss drops it "
                f"(`alp inbox dismiss {params.id}` calls it)",
                id=params.id,
            )
        await self._waiting(caller, params.id)
        if not await self._decide(params.id, "dismissed"):
            await self._waiting(caller, params.id)
        dismissed = await handoff_by_id(self.d.store, params.id)
        publish_inbox(self.d, dismissed, "dismissed")
        return dismissed

    async def dismiss_proposal(self, caller: Caller, params: m.InboxItemRef) -> m.MemoryProposal:
        """`memory/dismiss`: a run's proposal dropped, by the person only."""
        await self._refuse_runs(caller, params.id)
        return await self.proposals.dismiss(caller, params.id)


__all__ = ["Inbox", "hold"]
