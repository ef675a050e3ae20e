"""History sync: the service that keeps the history of executions' transcripts current.

`HistoryService` holds what the syncs share: the writer with the index triggers' functions
registered (`write`, `write_blocking`), one lock per execution (one sync of an execution at
a time; the copy itself is `alpd.services.history.execution_copy`), the queue the settle
hook fills, the background pass (`tick`, run by `alpd.background.history_sync`), a thread's
re-sync with progress (`sync_thread`), and the transcript reader process of imports.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final, TypeVar

import anyio
import structlog

from alpd.errors import StorageFull
from alpd.services.context import Caller
from alpd.services.history.execution_copy import Progress, SyncReport, sync_one
from alpd.services.history.progress import ProgressNotifier
from alpd.services.history.read_process import TranscriptReader
from alpd.services.history.summary import thread_history
from alpd.services.history.thread_docs import refresh_thread_doc
from alpd.services.history.transcript import TranscriptService
from alpd.services.runs.executions import Executions
from alpd.store.db import BlockingTx, Tx
from alpd.store.history.entries import register_functions, register_functions_on
from alpd.store.history.sync import (
    running_with_transcript,
    settled_roots,
    unfinished_first_syncs,
)
from alpd.store.history.threads import stale_thread_docs
from alpd.store.history.transcript_live import last_entry
from protocol import jsonrpc
from protocol import messages as m

__all__ = ["HistoryService"]

#: at most this many settled executions with an unfinished first sync are resumed per tick
RESUME_PER_TICK: Final = 16

log = structlog.get_logger("alpd.history")

T = TypeVar("T")


class HistoryService:
    """Sync of executions' transcripts into the history, and the thread-level views of it."""

    def __init__(self, executions: Executions) -> None:
        self.ex = executions
        self.d = executions.d
        self._locks: dict[str, anyio.Lock] = {}
        self._functions_ready = False
        self.pending: set[str] = set()
        #: running executions with a transcript at the last pass
        self.running = 0
        self.wakeup = anyio.Event()
        #: reads the transcripts of an import in a process of its own
        self.reader = TranscriptReader()
        #: `thread/transcript` pages, and its live items after a copy added entries
        self.transcripts = TranscriptService(self.d)

    # writes

    async def write(self, unit: Callable[[Tx], Awaitable[T]]) -> T:
        """`Store.write`, with the index triggers' functions registered on the writer."""

        async def wrapped(tx: Tx) -> T:
            if not self._functions_ready:
                await register_functions(tx)
                self._functions_ready = True
            return await unit(tx)

        return await self.d.store.write(wrapped)

    async def write_blocking(self, unit: Callable[[BlockingTx], T]) -> T:
        """`Store.write_blocking` (one hop to the writer's thread for the whole unit), with
        the index triggers' functions registered on the writer."""

        def wrapped(tx: BlockingTx) -> T:
            if not self._functions_ready:
                register_functions_on(tx)
                self._functions_ready = True
            return unit(tx)

        return await self.d.store.write_blocking(wrapped)

    # after settle (hook) and the background worker's queue

    async def after_settle(self, execution_id: str) -> None:
        """Queue a sync; the settle that called us does not wait for it."""
        self.request(execution_id)

    def request(self, execution_id: str) -> None:
        self.pending.add(execution_id)
        self.wakeup.set()

    # sync of one execution

    async def sync_execution(
        self, execution_id: str, progress: Progress | None = None
    ) -> SyncReport:
        """Copy what is new in the execution's transcript; one sync per execution at a time.
        Subscribers of `thread/transcript` then get what it added."""
        lock = self._locks.setdefault(execution_id, anyio.Lock())
        try:
            async with lock:
                # Where this copy starts, whether anyone listens yet or not: a reader who
                # subscribes while it runs (`alp thread log -f` subscribes, then reads a page)
                # must still be told what it added — a page read before its commit does not
                # hold it, and the next copy's items start after it. One indexed max().
                after = await last_entry(self.d.store, execution_id)
                report = await sync_one(self, execution_id, progress)
                if report.added and self.d.events.wanted("thread/transcript", None):
                    try:
                        await self.transcripts.publish_after(execution_id, after)
                    except Exception:
                        log.exception("transcript_publish_failed", execution=execution_id)
                return report
        finally:
            if not lock.locked() and lock.statistics().tasks_waiting == 0:
                self._locks.pop(execution_id, None)

    # thread level

    async def sync_thread(self, caller: Caller, params: m.ThreadSyncParams) -> m.ThreadSyncResult:
        """Re-run the copy of every settled root of the thread (idempotent), with progress."""
        await self.ex.threads.get(caller, params.thread_id)
        roots = await settled_roots(self.d.store, params.thread_id)
        notifier = ProgressNotifier(self, params.progress_token, "sync", params.thread_id)
        added = 0
        for index, execution_id in enumerate(roots):
            notifier.total = len(roots)
            report = await self.sync_execution(execution_id, notifier.bytes_progress)
            added += report.added
            notifier.update(done=index + 1, added=added, force=True)
        await self.refresh_thread_doc(params.thread_id)
        summary = await self.summary(params.thread_id)
        return m.ThreadSyncResult(
            thread_id=params.thread_id,
            level=summary.level,
            entries=summary.entries,
            added=added,
            roots=summary.by_root,
        )

    async def summary(self, thread_id: str) -> m.HistorySummary:
        return await thread_history(self.d.store, thread_id)

    # thread documents (titles and context lines in the search index)

    async def refresh_thread_doc(self, thread_id: str) -> None:
        await refresh_thread_doc(self, thread_id)

    async def stale_thread_docs(self, limit: int = 100) -> list[str]:
        return await stale_thread_docs(self.d.store, limit)

    # background work (run by alpd.background.history_sync)

    async def tick(self) -> int:
        """One pass: queued executions, running ones (entries appear before they settle),
        settled ones whose first sync never finished (a crash), stale thread documents; and
        the transcript reader process stopped once idle."""
        queued = sorted(self.pending)
        self.pending.clear()
        running = await running_with_transcript(self.d.store)
        self.running = len(running)
        unfinished = await unfinished_first_syncs(self.d.store, RESUME_PER_TICK)
        ids = dict.fromkeys([*queued, *running, *unfinished])
        added = 0
        # A full disk (StorageFull) ends the pass with one line and no traceback: what was
        # not written stays pending (the executions queued again, a thread's document stale)
        # and the next pass after space returns writes it.
        order = list(ids)
        for n, execution_id in enumerate(order):
            try:
                added += (await self.sync_execution(execution_id)).added
            except StorageFull as exc:
                log.warning("history_sync_failed", execution=execution_id, error=exc.message)
                self.pending.update(order[n:])
                return added
            except Exception:
                log.exception("history_sync_failed", execution=execution_id)
        for thread_id in await self.stale_thread_docs():
            try:
                await self.refresh_thread_doc(thread_id)
            except StorageFull as exc:
                log.warning("thread_doc_failed", thread=thread_id, error=exc.message)
                break
            except Exception:
                log.exception("thread_doc_failed", thread=thread_id)
        if self.reader.idle():
            await anyio.to_thread.run_sync(self.reader.stop_if_idle)
        return added

    def watched_live(self) -> bool:
        """Whether a run's transcript is growing while someone reads the thread live: the
        background pass then comes sooner, so a new line reaches them well within a second."""
        return self.running > 0 and self.d.events.wanted("thread/transcript", None)

    # progress

    def publish_progress(self, progress: m.HistoryProgress, thread_id: str | None) -> None:
        frame = jsonrpc.encode_notification("history/progress", progress)
        self.d.events.publish("history/progress", frame, thread_id)
