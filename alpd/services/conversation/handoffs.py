"""`handoff/send`: a capped summary from one thread into another of the same owner.

A send, in order:

1. the summary is checked (`alpd.domain.conversation.handoff.check_summary`: 4 KiB, refused with its
   size, never cut) and secret-filtered; the source is the caller's run, found by process
   ancestry as for pins (its thread), or — for a person at a shell — the thread `from`
   names; the target is a thread id or title (`alpd.services.threads.refs`); artifacts are
   fingerprinted where they lie (`alpd.services.conversation.artifacts`);
2. ONE write transaction reads the route, the chain the sending run was woken by and the
   pair's slots, asks the guards (`alpd.domain.conversation.guards`) and writes the handoff with
   its slot *reserved* — so simultaneous sends are admitted one after another, never on the
   same "not full yet";
3. the handoff is delivered: a `directive` into the target's inbox
(`alpd.services.conversation.inbox`),
   anything else through the one delivery path (`DeliveryService.submit`, which picks
   wake, queue or inject by the target's state — nothing here chooses a path);
4. the slot is *committed* in the very transaction that stores the delivery (or puts the
   directive in the inbox); if the delivery is refused it is *released* instead (no slot
   burnt) and the error goes back to the caller — a release shielded from cancellation. A
   daemon that dies between 2 and 4 leaves a reservation with no delivery: it expires
   (`reservationSeconds`, 60 s by default).

Where a delivery ended (woke a root, a round, taken mid-run, failed) is reported by the
delivery service (`landed`): the handoff is linked to it and `handoff/delivered` published;
a delivery that failed later releases the slot too.
"""

from __future__ import annotations

from datetime import UTC, datetime

import anyio
import msgspec
import structlog

from alpd.clock import iso
from alpd.domain.conversation.delivery import Source
from alpd.domain.conversation.guards import GuardLimits, admit, check_route
from alpd.domain.conversation.handoff import Artifact, check_summary, handoff_text, source_label
from alpd.domain.runs.policy import Origin, decode_policy
from alpd.domain.secrets.filter import redact
from alpd.errors import (
    AlpError,
    HandoffRateLimited,
    InvalidArgument,
    NotFromARun,
    PinOutsideExecution,
)
from alpd.services.context import Caller
from alpd.services.conversation.artifacts import describe_artifacts
from alpd.services.conversation.delivery import DeliveryService, Landing, PushGuard, Submission
from alpd.services.conversation.handoff_rows import handoff_by_id, publish_delivered
from alpd.services.conversation.inbox import hold
from alpd.services.runs.callers import execution_of_caller
from alpd.services.threads.refs import resolve_thread
from alpd.store.conversation import handoffs as store
from alpd.store.db import Tx
from alpd.store.runs import ExecutionRecord
from alpd.store.threads.refs import NamedThread
from protocol import messages as m

log = structlog.get_logger("alpd.handoffs")

_artifacts = msgspec.json.Encoder()


class HandoffService:
    def __init__(self, delivery: DeliveryService, holder: str) -> None:
        self.delivery = delivery
        self.d = delivery.d
        #: this daemon instance: reservations it holds are always committed or released
        self.holder = holder
        delivery.on_landed.append(self.landed)
        delivery.push_guard = self.push_guard

    @property
    def limits(self) -> GuardLimits:
        return self.delivery.ex.agents.handoff

    async def send(self, caller: Caller, params: m.HandoffSendParams) -> m.HandoffSendResult:
        summary = redact(check_summary(params.summary)).text
        source, execution = await self._source(caller, params.source)
        target = await resolve_thread(self.d.store, caller, params.target)
        roots = [source.workspace]
        if execution is not None:
            roots.append(decode_policy(execution.policy).workspace)
        artifacts = await describe_artifacts(params.artifacts, roots)
        label = source_label(source.title)
        handoff_id, sent_at = await self._reserve(
            caller, params, source, target, execution, summary, artifacts
        )

        async def commit(tx: Tx, delivery_id: int) -> None:
            await store.commit_slot(tx, handoff_id, delivery_id)

        try:
            if params.directive:
                await hold(self.d, handoff_id)
                return m.HandoffSendResult(handoff=await handoff_by_id(self.d.store, handoff_id))
            by = f"execution:{execution.id}" if execution is not None else f"uid:{caller.uid}"
            submitted = await self.delivery.submit(
                Submission(
                    thread_id=target.id,
                    kind="push",
                    origin=Origin(
                        door=params.door,
                        by=by,
                        push_source=f"handoff from {label}",
                        handoff_id=handoff_id,
                        purpose="handoff",
                    ),
                    source=Source(kind="handoff", label=label, at=sent_at),
                    text=handoff_text(summary, artifacts, label),
                    notify=True,
                    sender_uid=caller.uid,
                    in_unit=commit,
                ),
                requested_by=caller,
            )
        except BaseException as exc:
            with anyio.CancelScope(shield=True):
                reason = exc.message if isinstance(exc, AlpError) else type(exc).__name__
                await self._release(handoff_id, reason, only_reserved=True)
            raise
        if submitted.status == "started":
            await self._woke(handoff_id)
        return m.HandoffSendResult(
            handoff=await handoff_by_id(self.d.store, handoff_id), execution=submitted.execution
        )

    async def _source(
        self, caller: Caller, named: str | None
    ) -> tuple[NamedThread, ExecutionRecord | None]:
        """The source thread, and the run sending (None: a person at a shell)."""
        try:
            execution = await execution_of_caller(self.d.store, caller)
        except PinOutsideExecution as exc:
            if named is None:
                raise PinOutsideExecution(
                    "this process is not inside a running alp execution, so the handoff has "
                    "no source; from a shell, name it: `alp handoff TARGET --from THREAD`",
                    pid=caller.pid,
                ) from exc
            return await resolve_thread(self.d.store, caller, named), None
        if execution.thread_id is None:
            raise InvalidArgument(
                f"execution {execution.id} belongs to no thread; a handoff goes between threads",
                executionId=execution.id,
            )
        source = await resolve_thread(self.d.store, caller, execution.thread_id)
        if named is not None:
            claimed = await resolve_thread(self.d.store, caller, named)
            if claimed.id != source.id:
                raise NotFromARun(
                    f"this run belongs to thread {source.id}; it hands off from there, "
                    f"not from {claimed.id} (drop --from)",
                    threadId=source.id,
                )
        return source, execution

    async def _reserve(
        self,
        caller: Caller,
        params: m.HandoffSendParams,
        source: NamedThread,
        target: NamedThread,
        execution: ExecutionRecord | None,
        summary: str,
        artifacts: list[Artifact],
    ) -> tuple[str, str]:
        """Admit the send and write it with its slot reserved: (its id, when it was sent)."""
        limits = self.limits
        moment = self.d.clock.now()
        now = moment.timestamp()
        handoff_id = self.d.clock.new_id("handoff_")
        chain_id = self.d.clock.new_id("chain_")

        async def unit(tx: Tx) -> tuple[str, str]:
            ends: dict[str, store.RouteEnd] = {}
            for thread_id in (source.id, target.id):
                found = await store.route_end(tx, thread_id)
                assert found is not None  # threads are never deleted
                ends[thread_id] = found
            check_route(
                caller_uid=caller.uid,
                source_id=source.id,
                source_owner=ends[source.id].owner_uid,
                target_id=target.id,
                target_owner=ends[target.id].owner_uid,
                target_status=ends[target.id].status,
            )
            link = (
                await store.chain_link(tx, execution.id, execution.root_id or execution.id)
                if execution is not None
                else None
            )
            since = now - limits.pair_window_seconds
            slots = [
                *await store.pair_slots(tx, source.id, target.id, since),
                *await store.push_slots(tx, source.id, target.id, since),
            ]
            try:
                admission = admit(
                    limits,
                    now=now,
                    holder=self.holder,
                    slots=slots,
                    link=link,
                    new_chain_id=chain_id,
                )
            except HandoffRateLimited as exc:
                retry = now + float(exc.data["retryAfterSeconds"])
                exc.data["retryAt"] = _iso(retry)
                exc.data["sourceId"], exc.data["targetId"] = source.id, target.id
                raise
            if admission.expired_reservations:
                await store.abandon_reservations(tx, admission.expired_reservations)
            await store.insert_handoff(
                tx,
                store.NewHandoff(
                    id=handoff_id,
                    owner_uid=caller.uid,
                    source_thread_id=source.id,
                    source_execution_id=execution.id if execution is not None else None,
                    target_thread_id=target.id,
                    summary=summary,
                    artifacts=_artifacts.encode(artifacts).decode(),
                    directive=params.directive,
                    chain_id=admission.chain_id,
                    hop=admission.hop,
                    reserved_at=now,
                    holder=self.holder,
                    created_at=_iso(now),
                ),
            )
            return handoff_id, _iso(now)

        return await self.d.store.write(unit)

    async def push_guard(self, caller: Caller, target_id: str) -> PushGuard | None:
        """The loop guards for a push (module `alpd.domain.conversation.guards`): None when
        the caller is no run (a person, a script, an alert); from a run, who sends it and the
        writes that admit it inside the unit that stores it — the chain it continues and its
        hop, its pair's quota counted with the pair's handoffs — or refuse it
        (`HANDOFF_LOOP`, `HANDOFF_RATE_LIMITED`), storing nothing."""
        try:
            execution = await execution_of_caller(self.d.store, caller)
        except PinOutsideExecution:
            return None
        source_id = execution.thread_id
        if source_id is None:
            return None
        limits = self.limits
        now = self.d.clock.now().timestamp()
        chain_id = self.d.clock.new_id("chain_")

        async def unit(tx: Tx, delivery_id: int) -> None:
            link = await store.chain_link(tx, execution.id, execution.root_id or execution.id)
            since = now - limits.pair_window_seconds
            slots = [
                *await store.pair_slots(tx, source_id, target_id, since),
                *await store.push_slots(tx, source_id, target_id, since, exclude=delivery_id),
            ]
            try:
                admission = admit(
                    limits, now=now, holder=self.holder, slots=slots, link=link,
                    new_chain_id=chain_id,
                )  # fmt: skip
            except HandoffRateLimited as exc:
                exc.data["retryAt"] = _iso(now + float(exc.data["retryAfterSeconds"]))
                exc.data["sourceId"], exc.data["targetId"] = source_id, target_id
                raise
            await store.record_push_chain(
                tx, delivery_id, source_id, admission.chain_id, admission.hop, now
            )

        return PushGuard(by=f"execution:{execution.id}", in_unit=unit)

    async def _woke(self, handoff_id: str) -> None:
        """It opened a root at once: it woke the thread rather than waited in its queue."""

        async def unit(tx: Tx) -> None:
            await store.mark_woke(tx, handoff_id)

        await self.d.store.write(unit)

    async def _release(self, handoff_id: str, reason: str, *, only_reserved: bool = False) -> None:
        """Free the slot (the delivery failed); `only_reserved`: unless a delivery was stored
        for it — then it was sent, and its slot stays committed."""

        async def unit(tx: Tx) -> None:
            await store.release_slot(tx, handoff_id, reason, only_reserved=only_reserved)

        await self.d.store.write(unit)
        log.info("handoff_released", handoff=handoff_id, reason=reason)

    async def landed(self, ids: list[int], how: Landing, execution_id: str | None) -> None:
        """Where the delivery service says deliveries ended: link, release, announce."""
        for carried in await store.handoff_deliveries(self.d.store, ids):
            handoff_id = carried.handoff_id
            if handoff_id is None:
                continue
            if how == "failed":
                await self._release(handoff_id, carried.error or "delivery failed")
                continue

            async def link(
                tx: Tx, handoff_id: str = handoff_id, delivery_id: int = carried.delivery_id
            ) -> None:
                await store.link_delivery(tx, handoff_id, delivery_id)

            await self.d.store.write(link)
            publish_delivered(self.d, await handoff_by_id(self.d.store, handoff_id))


def _iso(seconds: float) -> str:
    return iso(datetime.fromtimestamp(seconds, UTC))


__all__ = ["HandoffService"]
