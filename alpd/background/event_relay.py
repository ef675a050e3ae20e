"""Events across hosts on a PostgreSQL store (docs/many-machines.md, "Events across hosts").

Three tasks, joined by bounded queues:

- **out**: every notification this alpd publishes that crosses hosts
  (`alpd.domain.hosts.crossing.CROSSING`) is reduced to a reference (method, row id, change,
  thread, this alpd's instance) and queued (`OUTBOX`, full → dropped and counted, never
  waited on: publishing is synchronous); a task sends what is queued, up to `BATCH` at a
  time, as NOTIFYs of one transaction.
- **listen**: a connection of its own LISTENs on the role's channel; a reference from another
  alpd that a local subscriber wants is queued (`INBOX`, full → dropped and counted). One of
  this alpd's own is skipped: its subscribers had it when it was published. A lost connection
  is reconnected after a back-off (`BACKOFF_MIN` doubling to `BACKOFF_MAX`, back to the
  minimum once listening again).
- **replay**: every reference is kept in the database's log under a number that grows in
  commit order (`alpd.store.postgres.notify`), and NOTIFYed with it. The relay remembers the
  last number it heard (at start: the newest, read before the first LISTEN). Each time it is
  listening again it reads the log after that number, oldest first, and hears those as if
  NOTIFYed; a number not above the last one heard is skipped, so a reference both read from
  the log and NOTIFYed after the LISTEN began is heard once. At most `REPLAY` are read: more
  missed than that, the oldest are left out (`events_not_replayed` in the log, counted).
- **relay**: each reference in turn, the row read from the database through the same owner
  checks a request gets (another person's row is not found, and skipped) and published to
  local subscribers as the host that made it would, not forwarded again.

Delivery is once per subscriber and in the senders' commit order, across a lost LISTEN
connection too, within those bounds; the rows stay the truth (a subscriber that connects
later, or a reader past the bounds, re-reads them).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Final

import anyio
import msgspec
import structlog
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from alpd.domain.hosts.crossing import CROSSING, Reference, decode, encode, reference_of
from alpd.errors import AlpError
from alpd.services.context import Caller
from alpd.services.conversation.handoff_rows import handoff_by_id
from alpd.services.runs.executions import Executions
from alpd.services.schedules.service import ScheduleService
from alpd.store.conversation.reports import report_by_id
from alpd.store.db import DatabaseUnavailable
from protocol import jsonrpc
from protocol import messages as m

__all__ = ["BACKOFF_MAX", "BACKOFF_MIN", "BATCH", "INBOX", "OUTBOX", "REPLAY", "EventRelay"]

#: references waiting to be sent, and received ones waiting to be read and published
OUTBOX: Final = 1024
INBOX: Final = 1024
#: references read back from the log at most, after a lost LISTEN connection (half the inbox:
#: what is replayed goes through it, beside what is heard meanwhile)
REPLAY: Final = INBOX // 2
#: NOTIFYs sent in one transaction at most
BATCH: Final = 100
#: seconds before listening again after a lost connection: doubling from the least to the most
BACKOFF_MIN: Final = 0.25
BACKOFF_MAX: Final = 15.0

log = structlog.get_logger("alpd.events")

_frame = msgspec.json.Decoder(dict[str, Any])


class EventRelay:
    def __init__(self, executions: Executions, schedules: ScheduleService, origin: str) -> None:
        self.d = executions.d
        self.executions = executions
        self.schedules = schedules
        #: this alpd's instance: the origin of the references it sends, and skips when heard
        self.origin = origin
        self.channel: str | None = None
        self._channel_known = anyio.Event()
        self._out_send: MemoryObjectSendStream[str]
        self._out: MemoryObjectReceiveStream[str]
        self._out_send, self._out = anyio.create_memory_object_stream[str](OUTBOX)
        self._in_send: MemoryObjectSendStream[Reference]
        self._in: MemoryObjectReceiveStream[Reference]
        self._in_send, self._in = anyio.create_memory_object_stream[Reference](INBOX)
        self.dropped_out = 0
        self._sent = 0
        self.dropped_in = 0
        #: the number in the log of the last reference heard (`Reference.logged`)
        self.last_logged = 0
        self.replayed = 0
        self.not_replayed = 0
        self.listening = False
        self._on_state: Callable[[m.TaskState], None] = lambda state: None
        self._state = "starting"

    @property
    def _caller(self) -> Caller:
        """The owner the rows are read as: this alpd's person (`Daemon.owner`, set at start
        after this relay is made)."""
        return Caller(uid=self.d.owner, gid=os.getgid(), pid=0)

    # out

    def forward(self, method: str, frame: bytes) -> None:
        """`EventBus.forward`: queue the reference of a notification published here."""
        if method not in CROSSING:
            return
        try:
            params = _frame.decode(frame).get("params")
        except msgspec.DecodeError:
            return
        self._sent += 1
        reference = reference_of(self.origin, self._sent, method, params)
        payload = encode(reference) if reference is not None else None
        if payload is None:
            return
        try:
            self._out_send.send_nowait(payload)
        except anyio.WouldBlock:
            self.dropped_out += 1
            if self.dropped_out % 100 == 1:
                log.warning("events_not_sent", reason="queue full", dropped=self.dropped_out)
                self._on_state(self.state(self._state))

    async def send_forever(self) -> None:
        await self._channel_known.wait()
        assert self.channel is not None
        from alpd.store.postgres.notify import notify

        async for payload in self._out:
            batch = [payload]
            while len(batch) < BATCH:
                try:
                    batch.append(self._out.receive_nowait())
                except anyio.WouldBlock:
                    break
            try:
                await notify(self.d.store, self.channel, batch)
            except DatabaseUnavailable as exc:
                self.dropped_out += len(batch)
                log.warning("events_not_sent", error=str(exc), dropped=self.dropped_out)
                self._on_state(self.state(self._state))
                await anyio.sleep(BACKOFF_MIN)

    # listen

    async def listen_forever(self, on_state: Callable[[m.TaskState], None]) -> None:
        from alpd.store.postgres.notify import channel_of, listen, newest

        delay = BACKOFF_MIN
        while True:
            try:
                if self.channel is None:
                    self.last_logged = await newest(self.d.store)
                    self.channel = await channel_of(self.d.store)
                    self._channel_known.set()
                async for payload in listen(self.d.store, self.channel, self.d.host_name or ""):
                    if payload is None:
                        await self._replay()
                        self.listening = True
                        delay = BACKOFF_MIN
                        on_state(self.state("listening"))
                        log.info("events_listening", channel=self.channel)
                        continue
                    self._heard(payload)
            except (DatabaseUnavailable, OSError) as exc:
                log.warning("events_connection_lost", error=str(exc), retry_in=delay)
                on_state(self.state("reconnecting", last_error=str(exc)))
            self.listening = False
            await anyio.sleep(delay)
            delay = min(delay * 2, BACKOFF_MAX)

    async def _replay(self) -> None:
        """What was logged after the last reference heard, heard now, oldest first."""
        from alpd.store.postgres.notify import missed_since

        missed = await missed_since(self.d.store, self.last_logged, REPLAY)
        if len(missed) > REPLAY:
            # the oldest are left out: the newest REPLAY are what a subscriber most needs
            self.not_replayed += 1
            log.warning(
                "events_not_replayed",
                after=self.last_logged,
                before=missed[1][0],
                reason=f"more than {REPLAY} missed",
            )
            self.last_logged, missed = missed[0][0], missed[1:]
        for logged, payload in missed:
            self._heard(payload, logged)
        if missed:
            self.replayed += len(missed)
            log.info("events_replayed", count=len(missed), last=self.last_logged)

    def _heard(self, payload: str, logged: int | None = None) -> None:
        reference = decode(payload, logged)
        if reference is None:
            return
        if reference.logged:
            if reference.logged <= self.last_logged:
                return  # heard already: replayed from the log, then NOTIFYed too
            self.last_logged = reference.logged
        if reference.host == self.origin:
            return
        if not self.d.events.wanted(reference.method, reference.thread_id):
            return
        try:
            self._in_send.send_nowait(reference)
        except anyio.WouldBlock:
            self.dropped_in += 1
            if self.dropped_in % 100 == 1:
                log.warning("events_not_relayed", reason="queue full", dropped=self.dropped_in)
                self._on_state(self.state(self._state))

    # relay

    async def relay_forever(self) -> None:
        async for reference in self._in:
            try:
                built = await self.notification(reference)
            except AlpError:
                continue  # gone since, or another person's: not this host's to tell
            except Exception:
                log.exception("event_relay_failed", method=reference.method, id=reference.id)
                continue
            if built is None:
                continue
            method, body, thread_id = built
            frame = jsonrpc.encode_notification(method, body)
            self.d.events.publish(method, frame, thread_id, forward=False)

    async def notification(self, ref: Reference) -> tuple[str, Any, str | None] | None:
        """The notification `ref` stands for, as this host would publish it; None (or a
        not-found error) if its row is gone or not the caller's."""
        caller, change = self._caller, ref.change or ""
        threads = self.executions.threads
        if ref.method == "execution/changed":
            execution = await self.executions.show(caller, m.ExecutionRef(execution_id=ref.id))
            body: Any = m.ExecutionChanged(execution=execution, change=change)
            return ref.method, body, execution.thread_id
        if ref.method == "thread/changed":
            thread = await threads.get(caller, ref.id)
            return ref.method, m.ThreadChanged(thread=thread, change=change), thread.id
        if ref.method == "thread/report":
            report = await report_by_id(self.d.store, int(ref.id)) if ref.id.isdigit() else None
            if report is None:
                return None
            thread = await threads.get(caller, report.thread_id)
            body = m.ThreadReport(report=report, thread_title=thread.title)
            return ref.method, body, report.thread_id
        if ref.method in ("handoff/delivered", "inbox/changed"):
            handoff = await handoff_by_id(self.d.store, ref.id)
            await threads.get(caller, handoff.target_thread_id)
            if ref.method == "handoff/delivered":
                body = m.HandoffDelivered(handoff=handoff)
            else:
                body = m.InboxChanged(change=change, item=handoff)  # type: ignore[arg-type]
            return ref.method, body, handoff.target_thread_id
        schedule = await self.schedules.show(caller, m.ScheduleRef(schedule_id=ref.id))
        body = m.ScheduleChanged(schedule=schedule, change=change)
        return ref.method, body, schedule.thread_id

    def state(self, state: str, last_error: str | None = None) -> m.TaskState:
        self._state = state
        dropped = self.dropped_out + self.dropped_in
        return m.TaskState(
            name="events",
            state=state,
            last_run_at=self.d.clock.now_iso(),
            detail=f"across hosts on {self.channel}"
            + (f"; {self.replayed} replayed" if self.replayed else "")
            + (f"; {dropped} dropped" if dropped else ""),
            last_error=last_error,
        )

    async def run(self, on_state: Callable[[m.TaskState], None]) -> None:
        self._on_state = on_state
        self.d.events.forward = self.forward
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self.listen_forever, on_state)
                tg.start_soon(self.send_forever)
                tg.start_soon(self.relay_forever)
        finally:
            self.d.events.forward = None
