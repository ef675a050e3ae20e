"""Keeping each thread's recap: triggers, the single flight per thread, one refresh, reads.

A refresh is triggered when a root of the thread settles (after its history is copied), when
a clear or undo wrote a new context revision (`after_step`), and by its own timer when the
gate said "later". What happens is decided by the pure rules of
`alpd.domain.recap.gate` (gating, single flight, back-off) and `alpd.domain.recap.summary` (the
bounded input, what is kept of the reply); this module reads the counts they need, runs the
summariser (`alpd.services.recap.summarisers`) and stores a valid recap, replacing the previous
one. Failures (no reply, a reply that is not a valid recap) are counted per thread for the
back-off in `recap_failures`, beside the recap, so a restart keeps backing off.

When the recap a thread shows changes — a refresh stored one that stands, or a clear or
undo made it lapse (`after_step`) — subscribers hear `thread/changed` with change `recap`,
the thread carrying the new headline (none when it lapsed). What `thread/recap` shows is
`alpd.services.recap.views`.

The history a recap may read comes from ONE function, `alpd.services.recap.entries.
readable_entries`; nothing else here reads history.
"""

from __future__ import annotations

import shutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Final

import anyio
import anyio.abc
import msgspec
import structlog

from alpd.domain.recap.config import RecapAvailability, RecapSettings, recap_availability
from alpd.domain.recap.gate import Activity, Flight, on_finish, on_trigger, refresh_verdict
from alpd.domain.recap.summary import (
    Recap,
    RecapEntry,
    RecapRejected,
    build_summary_input,
    parse_recap_reply,
    recap_digest,
)
from alpd.domain.runs.policy import ThreadBinding
from alpd.domain.threads.session_context import render_session_context
from alpd.services.context import Caller
from alpd.services.history.sync import HistoryService
from alpd.services.recap.entries import readable_entries
from alpd.services.recap.summarisers import (
    ApiSummariser,
    ClaudeSummariser,
    Summariser,
    SummaryJob,
    SummaryReply,
)
from alpd.services.recap.views import owned_recap, recap_view
from alpd.services.runs.executions import Executions
from alpd.services.threads.snapshots import load_snapshot
from alpd.store import recap as recaps
from alpd.store.db import Tx
from alpd.store.threads.shell import load_thread
from protocol import messages as m

log = structlog.get_logger("alpd.recap")

#: the newest entries one refresh reads (the input keeps what fits `inputChars`); the gate
#: counts new entries up to it
RECAP_ENTRY_LIMIT: Final = 400


@dataclass(frozen=True, slots=True)
class _Gathered:
    """What one refresh needs, read in one unit."""

    owner_uid: int
    open: bool
    binding: ThreadBinding
    context: str
    previous: Recap | None
    after_id: int
    made_at: datetime | None
    entries: list[RecapEntry]
    new_entries: int
    #: the newest settled root's sequence (what the recap covers, for the undo rule)
    roots: int
    new_roots: int
    #: failed refreshes in a row, and when the last one failed
    failures: int
    failed_at: datetime | None


class RecapService:
    def __init__(
        self,
        ex: Executions,
        history: HistoryService,
        summariser: Summariser | None = None,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
    ) -> None:
        self.ex = ex
        self.d = ex.d
        self.history = history
        self._summariser = summariser
        self._sleep = sleep
        self.tg: anyio.abc.TaskGroup | None = None
        self.flights: dict[str, Flight] = {}
        self.timers: set[str] = set()

    @property
    def settings(self) -> RecapSettings:
        return self.ex.agents.recap

    def availability(self) -> RecapAvailability:
        settings = self.settings
        program = None
        if settings.summariser == "runtime":
            command = self.ex.agents.runtime("claude").command or "claude"
            program = shutil.which(command, path=self.ex.environ.get("PATH"))
        return recap_availability(settings, claude_program=program, environ=self.ex.environ)

    def summariser(self) -> Summariser:
        if self._summariser is not None:
            return self._summariser
        if self.settings.summariser == "api":
            return ApiSummariser(self.ex)
        return ClaudeSummariser(self.ex)

    # triggers

    async def after_settle(self, execution_id: str) -> None:
        """A root settled: copy its history, then trigger (without holding up the settle)."""
        settled = await recaps.settled_execution(self.d.store, execution_id)
        if settled is None or not settled.is_root or settled.thread_id is None or self.tg is None:
            return
        self.tg.start_soon(
            self._after_root, execution_id, settled.thread_id, settled.has_transcript
        )

    async def _after_root(self, execution_id: str, thread_id: str, copy: bool) -> None:
        if copy:
            try:
                await self.history.sync_execution(execution_id)
            except Exception:
                log.exception("recap_history_sync_failed", execution=execution_id)
        self.trigger(thread_id)

    def trigger(self, thread_id: str) -> str:
        """Ask for a refresh: `start`, `follow-up` (one is owed) or `ignored` (one is owed
        already). Cheap and synchronous: the refresh runs in the service's task group."""
        flight, action = on_trigger(self.flights.get(thread_id, Flight()))
        self.flights[thread_id] = flight
        if action == "start":
            assert self.tg is not None
            self.tg.start_soon(self._fly, thread_id)
        return action

    async def _fly(self, thread_id: str) -> None:
        again = True
        while again:
            try:
                await self.consider(thread_id)
            except Exception:
                log.exception("recap_refresh_crashed", thread=thread_id)
            flight, again = on_finish(self.flights.get(thread_id, Flight(running=True)))
            if flight.running:
                self.flights[thread_id] = flight
            else:
                self.flights.pop(thread_id, None)

    async def consider(self, thread_id: str) -> None:
        """Gate, then refresh if due; a `later` verdict sets the thread's one timer."""
        if not self.availability().available:
            return
        settings = self.settings
        gathered = await self._gather(thread_id, settings)
        if gathered is None or not gathered.open:
            return
        activity = Activity(
            new_entries=gathered.new_entries,
            new_roots=gathered.new_roots,
            last_refresh_at=gathered.made_at,
            failures=gathered.failures,
            last_failure_at=gathered.failed_at,
        )
        now = self.d.clock.now()
        verdict = refresh_verdict(activity, settings, now)
        if verdict.action == "later" and verdict.at is not None:
            self._later(thread_id, (verdict.at - now).total_seconds())
        elif verdict.action == "refresh":
            await self._refresh(thread_id, gathered, settings)

    def _later(self, thread_id: str, seconds: float) -> None:
        if thread_id in self.timers or self.tg is None:
            return
        self.timers.add(thread_id)

        async def wake() -> None:
            try:
                await self._sleep(max(seconds, 0.0))
            finally:
                self.timers.discard(thread_id)
            self.trigger(thread_id)

        self.tg.start_soon(wake)

    # one refresh

    async def _gather(self, thread_id: str, settings: RecapSettings) -> _Gathered | None:
        async def unit(tx: Tx) -> _Gathered | None:
            thread = await recaps.recap_thread(tx, thread_id)
            if thread is None:
                return None
            recap = await recaps.recap_of_thread(tx, thread_id)
            # a recap that no longer stands (a clear since, an undo of a root it read) is
            # not built on: the next one starts over from what may still be read
            standing = recap if recap is not None and recap.stands else None
            roots = await recaps.settled_roots(tx, thread_id)
            failed = await recaps.recap_failures(tx, thread_id)
            snapshot, digest = await load_snapshot(tx, thread_id, thread.context_revision)
            return _Gathered(
                owner_uid=thread.owner_uid,
                open=thread.status == "open",
                binding=ThreadBinding(
                    id=thread_id, context_revision=snapshot.revision, context_digest=digest
                ),
                context=render_session_context(snapshot, thread_title=thread.title),
                previous=standing.recap if standing is not None else None,
                after_id=standing.recap_entry_id if standing is not None else 0,
                made_at=datetime.fromisoformat(recap.made_at) if recap is not None else None,
                entries=[],
                new_entries=0,
                roots=roots,
                new_roots=0,
                failures=failed.failures if failed is not None else 0,
                failed_at=datetime.fromisoformat(failed.failed_at) if failed else None,
            )

        gathered = await self.d.store.write(unit)
        if gathered is None:
            return None
        entries = await readable_entries(
            self.d.store, thread_id, gathered.after_id, RECAP_ENTRY_LIMIT
        )
        # Counted from what may be read: a cleared or undone root is no activity. A root
        # that settled after the unit above may be among them: the recap covers it too.
        sequences = {entry.sequence for entry in entries if entry.sequence is not None}
        return replace(
            gathered,
            entries=entries,
            new_entries=len(entries),
            new_roots=len(sequences),
            roots=max(sequences | {gathered.roots}),
        )

    async def _refresh(self, thread_id: str, g: _Gathered, settings: RecapSettings) -> None:
        summary = build_summary_input(
            g.previous, g.context, g.entries, input_chars=settings.input_chars
        )
        job = SummaryJob(
            thread_id=thread_id,
            owner_uid=g.owner_uid,
            binding=g.binding,
            input=summary.text,
            settings=settings,
        )
        reply = await self.summariser().summarise(job)
        recap = await self._valid(thread_id, reply)
        if recap is None or reply.execution_id is None:
            return
        at = self.d.clock.now_iso()
        last_entry = summary.last_entry_id if summary.last_entry_id is not None else g.after_id

        execution_id = reply.execution_id

        async def unit(tx: Tx) -> m.Thread | None:
            await recaps.store_recap(
                tx,
                thread_id,
                recap,
                source_revision=g.binding.context_revision,
                recap_entry_id=last_entry,
                roots=g.roots,
                execution_id=execution_id,
                digest=recap_digest(recap),
                made_at=at,
            )
            await recaps.clear_recap_failures(tx, thread_id)
            # a clear or undo while it ran: stored, but it does not stand, nothing changed
            return await _standing(tx, thread_id)

        thread = await self.d.store.write(unit)
        if thread is not None:
            self.ex.threads.publish(thread, "recap")
        log.info("recap_refreshed", thread=thread_id, execution=reply.execution_id,
                 input_chars=len(summary.text), entries=summary.entries)  # fmt: skip

    async def _valid(self, thread_id: str, reply: SummaryReply) -> Recap | None:
        try:
            if reply.text is None:
                raise RecapRejected(reply.error or "no reply")
            return parse_recap_reply(reply.text)
        except RecapRejected as exc:
            count = await self._failed(thread_id)
            log.warning("recap_discarded", thread=thread_id, execution=reply.execution_id,
                        reason=exc.reason, failures=count)  # fmt: skip
            return None

    async def _failed(self, thread_id: str) -> int:
        """One more failure in a row (now); how many there are."""
        at = self.d.clock.now_iso()

        async def unit(tx: Tx) -> int:
            return await recaps.count_recap_failure(tx, thread_id, at)

        return await self.d.store.write(unit)

    async def after_step(self, thread_id: str, revision: int) -> None:
        """A clear or undo wrote context `revision`: if it made the recap lapse, subscribers
        hear it (`thread/changed`, change `recap`, no headline); then it asks for a refresh,
        through the gate like any trigger."""

        async def unit(tx: Tx) -> m.Thread | None:
            if not await recaps.recap_lapsed(tx, thread_id, revision):
                return None
            return await load_thread(tx, thread_id)

        thread = await self.d.store.write(unit)
        if thread is not None:
            self.ex.threads.publish(thread, "recap")
        if self.tg is not None:
            self.trigger(thread_id)

    # reads

    async def show(self, caller: Caller, thread_id: str) -> m.ThreadRecap:
        """`thread/recap`: the thread's recap (if one was made) and whether refreshes run."""
        stored = await owned_recap(self.d.store, caller, thread_id)
        return recap_view(
            thread_id, stored, self.availability(), refreshing=thread_id in self.flights
        )


async def _standing(tx: Tx, thread_id: str) -> m.Thread | None:
    """The thread with the headline of the recap it has now, or None when its recap does not
    stand (stored by a refresh that a clear or undo overtook: nothing anyone sees changed)."""
    headline = await recaps.standing_headline(tx, thread_id)
    if headline is None:
        return None
    thread = await load_thread(tx, thread_id)
    return msgspec.structs.replace(thread, headline=headline)


__all__ = ["RecapService"]
