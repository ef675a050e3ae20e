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
the thread carrying the new headline (none when it lapsed).

The history a recap may read comes from ONE function, `alpd.services.recap.entries.
readable_entries`; nothing else here reads history.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Final

import aiosqlite
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
from alpd.services.recap.entries import STANDS, STOOD_BEFORE, readable_entries
from alpd.services.recap.summarisers import (
    ApiSummariser,
    ClaudeSummariser,
    Summariser,
    SummaryJob,
    SummaryReply,
)
from alpd.services.runs.executions import Executions
from alpd.services.threads.lifecycle import check_owner, load_thread_row, thread_from_row
from alpd.services.threads.snapshots import load_snapshot
from protocol import messages as m

log = structlog.get_logger("alpd.recap")

#: the newest entries one refresh reads (the input keeps what fits `inputChars`); the gate
#: counts new entries up to it
RECAP_ENTRY_LIMIT: Final = 400
DERIVED_LABEL: Final = "derived from the thread's history by a model; not authority"


def recap_from_row(row: sqlite3.Row) -> Recap:
    return Recap(
        headline=row["headline"],
        gist=row["gist"],
        open_tasks=tuple(msgspec.json.decode(row["open_tasks"], type=list[str])),
    )


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
        row = await self.d.store.fetchone(
            "SELECT thread_id, is_root, kind, transcript_path, native_session_id "
            "FROM executions WHERE id = ?",
            (execution_id,),
        )
        if row is None or not row["is_root"] or row["thread_id"] is None or self.tg is None:
            return
        copy = bool(row["transcript_path"] or row["native_session_id"])
        self.tg.start_soon(self._after_root, execution_id, row["thread_id"], copy)

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
        async def unit(conn: aiosqlite.Connection) -> _Gathered | None:
            async with conn.execute("SELECT * FROM threads WHERE id = ?", (thread_id,)) as cur:
                thread = await cur.fetchone()
            if thread is None:
                return None
            async with conn.execute(
                f"SELECT r.*, {STANDS} AS stands FROM recaps r WHERE r.thread_id = ?",
                (thread_id,),
            ) as cur:
                recap = await cur.fetchone()
            # a recap that no longer stands (a clear since, an undo of a root it read) is
            # not built on: the next one starts over from what may still be read
            stands = recap is not None and bool(recap["stands"])
            async with conn.execute(
                "SELECT coalesce(max(sequence), 0) FROM executions "
                "WHERE thread_id = ? AND is_root = 1 AND status = 'settled'",
                (thread_id,),
            ) as cur:
                roots = int((await cur.fetchone())[0])  # type: ignore[index]
            async with conn.execute(
                "SELECT failures, failed_at FROM recap_failures WHERE thread_id = ?", (thread_id,)
            ) as cur:
                failed = await cur.fetchone()
            snapshot, digest = await load_snapshot(conn, thread_id, thread["context_revision"])
            return _Gathered(
                owner_uid=thread["owner_uid"],
                open=thread["status"] == "open",
                binding=ThreadBinding(
                    id=thread_id, context_revision=snapshot.revision, context_digest=digest
                ),
                context=render_session_context(snapshot, thread_title=thread["title"]),
                previous=recap_from_row(recap) if recap is not None and stands else None,
                after_id=int(recap["recap_entry_id"]) if recap is not None and stands else 0,
                made_at=datetime.fromisoformat(recap["made_at"]) if recap is not None else None,
                entries=[],
                new_entries=0,
                roots=roots,
                new_roots=0,
                failures=failed["failures"] if failed is not None else 0,
                failed_at=datetime.fromisoformat(failed["failed_at"]) if failed else None,
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

        async def unit(conn: aiosqlite.Connection) -> m.Thread | None:
            await conn.execute(
                "INSERT OR REPLACE INTO recaps (thread_id, headline, gist, open_tasks, "
                "source_revision, recap_entry_id, roots, execution_id, digest, made_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    thread_id,
                    recap.headline,
                    recap.gist,
                    msgspec.json.encode(list(recap.open_tasks)).decode(),
                    g.binding.context_revision,
                    last_entry,
                    g.roots,
                    reply.execution_id,
                    recap_digest(recap),
                    at,
                ),
            )
            await conn.execute("DELETE FROM recap_failures WHERE thread_id = ?", (thread_id,))
            # a clear or undo while it ran: stored, but it does not stand, nothing changed
            return await _standing(conn, thread_id)

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

        async def unit(conn: aiosqlite.Connection) -> int:
            async with conn.execute(
                "INSERT INTO recap_failures (thread_id, failures, failed_at) VALUES (?, 1, ?) "
                "ON CONFLICT (thread_id) DO UPDATE SET failures = failures + 1, "
                "failed_at = excluded.failed_at RETURNING failures",
                (thread_id, at),
            ) as cur:
                row = await cur.fetchone()
            return int(row[0]) if row is not None else 1

        return await self.d.store.write(unit)

    async def after_step(self, thread_id: str, revision: int) -> None:
        """A clear or undo wrote context `revision`: if it made the recap lapse, subscribers
        hear it (`thread/changed`, change `recap`, no headline); then it asks for a refresh,
        through the gate like any trigger."""

        async def unit(conn: aiosqlite.Connection) -> m.Thread | None:
            async with conn.execute(
                f"SELECT {STOOD_BEFORE} AS before, {STOOD_BEFORE} AS after "
                "FROM recaps r WHERE r.thread_id = ?",
                (revision, revision + 1, thread_id),
            ) as cur:
                row = await cur.fetchone()
            if row is None or not row["before"] or row["after"]:
                return None
            return thread_from_row(await load_thread_row(conn, thread_id))

        thread = await self.d.store.write(unit)
        if thread is not None:
            self.ex.threads.publish(thread, "recap")
        if self.tg is not None:
            self.trigger(thread_id)

    # reads

    async def show(self, caller: Caller, thread_id: str) -> m.ThreadRecap:
        """`thread/recap`: the thread's recap (if one was made) and whether refreshes run."""

        async def unit(conn: aiosqlite.Connection) -> sqlite3.Row | None:
            check_owner(await load_thread_row(conn, thread_id), caller)
            async with conn.execute(
                f"SELECT * FROM recaps r WHERE r.thread_id = ? AND {STANDS}", (thread_id,)
            ) as cur:
                return await cur.fetchone()

        row = await self.d.store.write(unit)
        return recap_view(thread_id, row, self.availability(), refreshing=thread_id in self.flights)


async def _standing(conn: aiosqlite.Connection, thread_id: str) -> m.Thread | None:
    """The thread with the headline of the recap it has now, or None when its recap does not
    stand (stored by a refresh that a clear or undo overtook: nothing anyone sees changed)."""
    async with conn.execute(
        f"SELECT r.headline FROM recaps r WHERE r.thread_id = ? AND {STANDS}", (thread_id,)
    ) as cur:
        recap = await cur.fetchone()
    if recap is None:
        return None
    thread = thread_from_row(await load_thread_row(conn, thread_id))
    return msgspec.structs.replace(thread, headline=recap["headline"])


def recap_state(availability: RecapAvailability) -> m.RecapState:
    return m.RecapState(
        available=availability.available,
        summariser=availability.summariser,
        reason=availability.reason,
        hint=availability.hint,
    )


def recap_view(
    thread_id: str, row: sqlite3.Row | None, availability: RecapAvailability, *, refreshing: bool
) -> m.ThreadRecap:
    state = recap_state(availability)
    if row is None:
        return m.ThreadRecap(thread_id=thread_id, state=state, refreshing=refreshing)
    recap = recap_from_row(row)
    return m.ThreadRecap(
        thread_id=thread_id,
        state=state,
        refreshing=refreshing,
        headline=recap.headline,
        gist=recap.gist,
        open_tasks=list(recap.open_tasks),
        source_revision=row["source_revision"],
        made_at=row["made_at"],
        execution_id=row["execution_id"],
        label=DERIVED_LABEL,
    )


__all__ = ["DERIVED_LABEL", "RecapService", "recap_from_row", "recap_state", "recap_view"]
