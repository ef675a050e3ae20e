"""History sync: copy an execution's native transcript into `history_entries`, incrementally.

One sync of an execution reads its transcript from the cursor's byte offset in bounded chunks
(`CHUNK_BYTES`, a longer line up to `MAX_LINE_BYTES`), parses each chunk with the pure reader
of its format, **redacts every stored text** (prompts, replies, tool inputs, output tails),
and writes the chunk's rows, the advanced cursor and the execution's usage/cost in **one**
transaction — so a crash at any point leaves rows and cursor agreeing: no duplicates (rows
are also keyed by native id), no gaps. Reading, parsing and redacting run in a worker thread;
only the write is on the store's writer.

Completeness (`executions.history_level`), set when a sync reaches the end of the file:
`complete`; `partial` when complete lines were skipped (count in `history_skipped`);
`final-only` for a settled run without a transcript (only its outcome is kept);
`unsupported` for a runtime without a transcript format (the `command` runtime). A level
stays NULL while a first sync is unfinished, which is how the background worker finds
work a crash interrupted.

A root that resumes a native session another execution already holds (same session id, same
file appended to) is linked to it (`history_cursors.links_to`, `link_kind = 'resume'`) and
its cursor starts where that copy ended; a Codex fork is linked to its parent (`fork`).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

import aiosqlite
import anyio
import msgspec
import structlog

from alpd.domain.runs.agents import ModelPrice
from alpd.domain.secrets.filter import redact
from alpd.domain.threads.context import Snapshot
from alpd.files import open_regular
from alpd.runtimes import claude as claude_runtime
from alpd.runtimes import codex as codex_runtime
from alpd.services.context import Caller
from alpd.services.history.chunks import CHUNK_BYTES, Chunk, Source, read_chunk
from alpd.services.history.read_process import TranscriptReader
from alpd.services.runs.executions import Executions
from alpd.store.db import Store
from alpd.store.history import (
    UPSERT_CURSOR,
    Cursor,
    insert_entries,
    register_functions,
    register_functions_on,
)
from protocol import jsonrpc
from protocol import messages as m

__all__ = [
    "CHUNK_BYTES",
    "LEVEL_ORDER",
    "HistoryService",
    "SyncReport",
    "history_level",
    "price_cost",
    "thread_history",
]

#: at most this many settled executions with an unfinished first sync are resumed per tick
RESUME_PER_TICK: Final = 16
#: at most one progress notification per this many seconds (plus the last one)
PROGRESS_INTERVAL: Final = 0.25

READERS: Final = ("claude", "codex")

log = structlog.get_logger("alpd.history")

T = TypeVar("T")
Progress = Callable[[int], None]


@dataclass(slots=True)
class SyncReport:
    """What one sync of one execution did."""

    execution_id: str
    level: m.HistoryLevel | None
    added: int = 0
    skipped: int = 0
    consumed: int = 0


class _CursorMoved(Exception):
    """Another sync advanced the cursor between our read and our write; re-read."""


_USAGE = msgspec.json.Decoder(m.Usage)


def _plus(a: m.Usage, b: m.Usage) -> m.Usage:
    return m.Usage(
        input_tokens=a.input_tokens + b.input_tokens,
        output_tokens=a.output_tokens + b.output_tokens,
        cache_read_tokens=a.cache_read_tokens + b.cache_read_tokens,
        cache_creation_tokens=a.cache_creation_tokens + b.cache_creation_tokens,
    )


def price_cost(usage: m.Usage, model: str | None, prices: dict[str, ModelPrice]) -> float | None:
    """USD for `usage` at the configured price of `model` (exact name, else the longest
    configured name contained in it: `sonnet` prices `claude-sonnet-4-5`)."""
    if not prices or not model:
        return None
    price = prices.get(model)
    if price is None:
        names = [name for name in prices if name in model]
        if not names:
            return None
        price = prices[max(names, key=len)]
    total = (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_read_tokens * price.cache_read
        + usage.cache_creation_tokens * price.cache_write
    )
    return round(total / 1_000_000, 6)


#: worst first: complete > partial > final-only > unsupported, the less history a level
#: keeps the worse it is. `pending` (a settled root whose copy has not finished) is known to
#: be no worse than complete only, so it shows when everything else is complete.
LEVEL_ORDER: Final[tuple[m.HistoryLevel, ...]] = (
    "unsupported",
    "final-only",
    "partial",
    "pending",
    "complete",
)


def history_level(levels: list[m.HistoryLevel]) -> m.HistoryLevel:
    """The worst of `levels` in `LEVEL_ORDER` (a thread's level from its settled roots');
    `complete` if none."""
    if not levels:
        return "complete"
    return min(levels, key=LEVEL_ORDER.index)


async def thread_history(store: Store, thread_id: str) -> m.HistorySummary:
    """Level (worst of the settled roots'), entry counts and links of a thread's roots."""
    rows = await store.fetchall(
        "SELECT e.id, e.status, e.history_level, e.history_skipped, c.links_to, "
        "c.link_kind, (SELECT count(*) FROM history_entries h WHERE h.execution_id = e.id) "
        "AS entries FROM executions e LEFT JOIN history_cursors c ON c.execution_id = e.id "
        "WHERE e.thread_id = ? AND e.is_root = 1 ORDER BY e.sequence",
        (thread_id,),
    )
    distinct = await store.fetchone(
        "SELECT count(DISTINCT h.native_id) FROM history_entries h JOIN executions e "
        "ON e.id = h.execution_id WHERE e.thread_id = ?",
        (thread_id,),
    )
    by_root = [
        m.RootHistory(
            execution_id=r["id"],
            level=r["history_level"] or "pending",
            entries=r["entries"],
            skipped=r["history_skipped"],
            links_to=r["links_to"],
            link_kind=r["link_kind"],
        )
        for r in rows
    ]
    levels: list[m.HistoryLevel] = [
        r["history_level"] or "pending" for r in rows if r["status"] == "settled"
    ]
    return m.HistorySummary(
        level=history_level(levels),
        entries=int(distinct[0]) if distinct else 0,
        roots=len(rows),
        by_root=by_root,
    )


class HistoryService:
    """Sync of executions' transcripts into the history, and the thread-level views of it."""

    def __init__(self, executions: Executions) -> None:
        self.ex = executions
        self.d = executions.d
        self._locks: dict[str, anyio.Lock] = {}
        self._functions_ready = False
        self.pending: set[str] = set()
        self.wakeup = anyio.Event()
        #: reads the transcripts of an import in a process of its own
        self.reader = TranscriptReader()

    # writes

    async def write(self, unit: Callable[[aiosqlite.Connection], Awaitable[T]]) -> T:
        """`Store.write`, with the index triggers' functions registered on the writer."""

        async def wrapped(conn: aiosqlite.Connection) -> T:
            if not self._functions_ready:
                await register_functions(conn)
                self._functions_ready = True
            return await unit(conn)

        return await self.d.store.write(wrapped)

    async def write_blocking(self, unit: Callable[[sqlite3.Connection], T]) -> T:
        """`Store.write_blocking` (one hop to the writer's thread for the whole unit), with
        the index triggers' functions registered on the writer."""

        def wrapped(conn: sqlite3.Connection) -> T:
            if not self._functions_ready:
                register_functions_on(conn)
                self._functions_ready = True
            return unit(conn)

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
        """Copy what is new in the execution's transcript; one sync per execution at a time."""
        lock = self._locks.setdefault(execution_id, anyio.Lock())
        try:
            async with lock:
                return await self._sync(execution_id, progress)
        finally:
            if not lock.locked() and lock.statistics().tasks_waiting == 0:
                self._locks.pop(execution_id, None)

    async def _sync(self, execution_id: str, progress: Progress | None) -> SyncReport:
        row = await self.d.store.fetchone(
            "SELECT id, runtime, status, native_session_id, transcript_path, history_level, "
            "history_skipped, created_at FROM executions WHERE id = ?",
            (execution_id,),
        )
        if row is None:
            return SyncReport(execution_id, None)
        cursor = await self._load_cursor(execution_id)
        if cursor is None:
            source = self._locate(row)
            if source is None or not os.path.exists(source.path):
                return await self._no_transcript(row, source)
            cursor = await self._new_cursor(row, source)
        source = Source(cursor.path, cursor.format)
        report = SyncReport(execution_id, row["history_level"], consumed=cursor.consumed)
        try:
            size = os.stat(source.path).st_size
        except OSError:
            return report  # the file went away after (part of) it was copied: keep the copy
        if size < cursor.consumed:
            log.warning(
                "transcript_shrank", execution=execution_id, size=size, consumed=cursor.consumed
            )
            cursor.consumed, cursor.skipped = 0, 0
        expected = await self._stored_offset(execution_id)
        while True:
            try:
                chunk = await anyio.to_thread.run_sync(read_chunk, execution_id, source, cursor)
            except OSError as exc:
                # Gone, or replaced by something that is not a regular file: keep the copy.
                log.warning("transcript_unreadable", execution=execution_id, error=str(exc))
                return report
            if chunk.consumed == cursor.consumed and expected is not None:
                break  # nothing complete beyond the cursor (an unfinished last line at most)
            try:
                report.added += await self._commit(row, cursor, chunk, expected)
            except _CursorMoved:
                # Another writer moved it (our own syncs of one execution are serialised):
                # the next pass resumes from wherever it is now.
                return report
            expected = cursor.consumed
            if progress is not None:
                progress(cursor.consumed)
            if chunk.at_end:
                break
        level: m.HistoryLevel = "partial" if cursor.skipped else "complete"
        if level != row["history_level"] or cursor.skipped != row["history_skipped"]:
            await self._finish(execution_id, level, cursor.skipped)
        report.level = level
        report.skipped = cursor.skipped
        report.consumed = cursor.consumed
        return report

    async def _stored_offset(self, execution_id: str) -> int | None:
        row = await self.d.store.fetchone(
            "SELECT consumed FROM history_cursors WHERE execution_id = ?", (execution_id,)
        )
        return None if row is None else int(row[0])

    async def _commit(
        self, row: sqlite3.Row, cursor: Cursor, chunk: Chunk, expected: int | None
    ) -> int:
        usage = _plus(_USAGE.decode(cursor.usage) if cursor.usage else m.Usage(), chunk.usage)
        cost = chunk.cost_usd if chunk.cost_usd is not None else cursor.cost_usd
        updated = Cursor(
            execution_id=cursor.execution_id,
            path=cursor.path,
            format=cursor.format,
            consumed=chunk.consumed,
            session_id=chunk.session_id or cursor.session_id,
            model=chunk.model or cursor.model,
            skipped=cursor.skipped + chunk.skipped,
            redactions=cursor.redactions + chunk.redactions,
            usage=msgspec.json.encode(usage).decode(),
            cost_usd=cost,
            links_to=cursor.links_to,
            link_kind=cursor.link_kind,
            updated_at=self.d.clock.now_iso(),
        )
        if chunk.parent_session_id and updated.links_to is None:
            parent = await self._execution_of_session(chunk.parent_session_id, row["id"])
            if parent is not None:
                updated.links_to, updated.link_kind = parent, "fork"
        if cost is None:
            prices = self.ex.agents.runtime(row["runtime"]).prices
            cost = price_cost(usage, updated.model, prices)

        def unit(conn: sqlite3.Connection) -> int:
            found = conn.execute(
                "SELECT consumed FROM history_cursors WHERE execution_id = ?",
                (cursor.execution_id,),
            ).fetchone()
            if (None if found is None else int(found[0])) != expected:
                raise _CursorMoved
            _, added = insert_entries(conn, chunk.rows)
            conn.execute(UPSERT_CURSOR, updated.values())
            conn.execute(
                "UPDATE executions SET usage = ?, cost_usd = ? WHERE id = ?",
                (updated.usage, cost, cursor.execution_id),
            )
            return added

        added = await self.write_blocking(unit)
        for name in Cursor.__slots__:
            setattr(cursor, name, getattr(updated, name))
        if chunk.redactions:
            log.info("history_redacted", execution=row["id"], findings=chunk.redactions)
        return added

    async def _finish(self, execution_id: str, level: m.HistoryLevel, skipped: int) -> None:
        async def unit(conn: aiosqlite.Connection) -> None:
            await conn.execute(
                "UPDATE executions SET history_level = ?, history_skipped = ? WHERE id = ?",
                (level, skipped, execution_id),
            )

        await self.write(unit)

    async def _no_transcript(self, row: sqlite3.Row, source: Source | None) -> SyncReport:
        level: m.HistoryLevel | None = None
        if source is None and row["runtime"] not in READERS and not row["transcript_path"]:
            level = "unsupported"
        elif row["status"] == "settled":
            level = "final-only"
        if level is not None and level != row["history_level"]:

            async def unit(conn: aiosqlite.Connection) -> None:
                await conn.execute(
                    "UPDATE executions SET history_level = ?, history_skipped = 0 WHERE id = ?",
                    (level, row["id"]),
                )

            await self.write(unit)
        return SyncReport(row["id"], level)

    # locating the transcript, starting a cursor

    def _locate(self, row: sqlite3.Row) -> Source | None:
        runtime, path, session = row["runtime"], row["transcript_path"], row["native_session_id"]
        if path:
            fmt = runtime if runtime in READERS else sniff_format(path)
            return Source(path, fmt) if fmt else None
        if not session or runtime not in READERS:
            return None
        env = {**self.ex.environ, **self.ex.agents.runtime(runtime).env}
        if runtime == "codex":
            found = codex_runtime.find_rollout(env, session)
        else:
            projects = claude_runtime.config_dir(env) / "projects"
            found = next(iter(sorted(projects.glob(f"*/{session}.jsonl"))), None)
        return Source(str(found), runtime) if found is not None else None

    async def _new_cursor(self, row: sqlite3.Row, source: Source) -> Cursor:
        cursor = Cursor(execution_id=row["id"], path=source.path, format=source.format)
        if row["native_session_id"]:
            earlier = await self.d.store.fetchone(
                "SELECT id FROM executions WHERE native_session_id = ? AND id != ? "
                "AND created_at <= ? ORDER BY created_at DESC LIMIT 1",
                (row["native_session_id"], row["id"], row["created_at"]),
            )
            if earlier is not None:
                cursor.links_to, cursor.link_kind = earlier["id"], "resume"
        # A resumed session appends to the same file: start where its copy ended.
        seed = await self.d.store.fetchone(
            "SELECT consumed, session_id, model FROM history_cursors WHERE path = ? "
            "AND execution_id != ? ORDER BY consumed DESC LIMIT 1",
            (source.path, row["id"]),
        )
        if seed is not None and cursor.links_to is not None:
            cursor.consumed, cursor.session_id, cursor.model = (
                int(seed["consumed"]),
                seed["session_id"],
                seed["model"],
            )
        return cursor

    async def _load_cursor(self, execution_id: str) -> Cursor | None:
        row = await self.d.store.fetchone(
            "SELECT * FROM history_cursors WHERE execution_id = ?", (execution_id,)
        )
        if row is None:
            return None
        return Cursor(**{key: row[key] for key in row.keys()})  # noqa: SIM118

    async def _execution_of_session(self, session_id: str, other_than: str) -> str | None:
        found = await self.d.store.fetchone(
            "SELECT id FROM executions WHERE native_session_id = ? AND id != ? "
            "ORDER BY created_at LIMIT 1",
            (session_id, other_than),
        )
        return None if found is None else str(found["id"])

    # thread level

    async def sync_thread(self, caller: Caller, params: m.ThreadSyncParams) -> m.ThreadSyncResult:
        """Re-run the copy of every settled root of the thread (idempotent), with progress."""
        await self.ex.threads.get(caller, params.thread_id)
        rows = await self.d.store.fetchall(
            "SELECT id FROM executions WHERE thread_id = ? AND is_root = 1 "
            "AND status = 'settled' ORDER BY sequence",
            (params.thread_id,),
        )
        notifier = ProgressNotifier(self, params.progress_token, "sync", params.thread_id)
        added = 0
        for index, row in enumerate(rows):
            notifier.total = len(rows)
            report = await self.sync_execution(row["id"], notifier.bytes_progress)
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
        row = await self.d.store.fetchone(
            "SELECT t.title, t.context_revision, t.updated_at, s.body, d.source AS indexed "
            "FROM threads t LEFT JOIN snapshots s ON s.thread_id = t.id "
            "AND s.revision = t.context_revision LEFT JOIN thread_docs d ON d.thread_id = t.id "
            "WHERE t.id = ?",
            (thread_id,),
        )
        if row is None or row["indexed"] == row["updated_at"]:
            return
        context = _context_text(bytes(row["body"])) if row["body"] is not None else ""
        title = redact(row["title"]).text if row["title"] else None
        context = redact(context).text

        async def unit(conn: aiosqlite.Connection) -> None:
            await conn.execute("DELETE FROM thread_docs WHERE thread_id = ?", (thread_id,))
            await conn.execute(
                "INSERT INTO thread_docs (id, thread_id, title, context, source) VALUES ("
                "(SELECT coalesce(min(id), 0) - 1 FROM thread_docs), ?, ?, ?, ?)",
                (thread_id, title, context, row["updated_at"]),
            )

        await self.write(unit)

    async def stale_thread_docs(self, limit: int = 100) -> list[str]:
        rows = await self.d.store.fetchall(
            "SELECT t.id FROM threads t LEFT JOIN thread_docs d ON d.thread_id = t.id "
            "WHERE d.source IS NOT t.updated_at LIMIT ?",
            (limit,),
        )
        return [r["id"] for r in rows]

    # background work (run by alpd.background.history_sync)

    async def tick(self) -> int:
        """One pass: queued executions, running ones (entries appear before they settle),
        settled ones whose first sync never finished (a crash), stale thread documents; and
        the transcript reader process stopped once idle."""
        queued = sorted(self.pending)
        self.pending.clear()
        running = await self.d.store.fetchall(
            "SELECT id FROM executions WHERE status != 'settled' "
            "AND (transcript_path IS NOT NULL OR native_session_id IS NOT NULL)"
        )
        unfinished = await self.d.store.fetchall(
            "SELECT id FROM executions WHERE status = 'settled' AND history_level IS NULL "
            "ORDER BY created_at LIMIT ?",
            (RESUME_PER_TICK,),
        )
        ids = dict.fromkeys([*queued, *(r["id"] for r in running), *(r["id"] for r in unfinished)])
        added = 0
        for execution_id in ids:
            try:
                added += (await self.sync_execution(execution_id)).added
            except Exception:
                log.exception("history_sync_failed", execution=execution_id)
        for thread_id in await self.stale_thread_docs():
            try:
                await self.refresh_thread_doc(thread_id)
            except Exception:
                log.exception("thread_doc_failed", thread=thread_id)
        if self.reader.idle():
            await anyio.to_thread.run_sync(self.reader.stop_if_idle)
        return added

    # progress

    def publish_progress(self, progress: m.HistoryProgress, thread_id: str | None) -> None:
        frame = jsonrpc.encode_notification("history/progress", progress)
        self.d.events.publish("history/progress", frame, thread_id)


@dataclass(slots=True)
class ProgressNotifier:
    """Throttled `history/progress` notifications for one long operation."""

    history: HistoryService
    token: str | None
    operation: str
    thread_id: str | None = None
    total: int = 0
    done: int = 0
    added: int = 0
    bytes: int = 0
    total_bytes: int = 0
    base_bytes: int = 0
    path: str | None = None
    _last: float = field(default=0.0)

    def bytes_progress(self, consumed: int) -> None:
        self.bytes = self.base_bytes + consumed
        self.update()

    def update(self, *, force: bool = False, **changes: Any) -> None:
        for key, value in changes.items():
            setattr(self, key, value)
        now = anyio.current_time()
        if not force and now - self._last < PROGRESS_INTERVAL:
            return
        self._last = now
        self.history.publish_progress(
            m.HistoryProgress(
                token=self.token,
                operation="import" if self.operation == "import" else "sync",
                done=self.done,
                total=self.total,
                added=self.added,
                bytes=self.bytes,
                total_bytes=self.total_bytes,
                path=self.path,
            ),
            self.thread_id,
        )


def sniff_format(path: str) -> str | None:
    """`claude` or `codex` from a transcript's first line (for runtimes without a format
    of their own whose run attached a transcript), or None."""
    try:
        with open_regular(path) as f:
            head = f.readline(1 << 16)
    except OSError:
        return None
    if b'"session_meta"' in head or b'"payload"' in head:
        return "codex"
    if b'"sessionId"' in head or b'"uuid"' in head or b'"type"' in head:
        return "claude"
    return None


_SNAPSHOT = msgspec.json.Decoder(Snapshot)


def _context_text(body: bytes) -> str:
    """The searchable lines of a context snapshot."""
    snapshot = _SNAPSHOT.decode(body)
    lines = [snapshot.objective.text] if snapshot.objective is not None else []
    for group in (
        snapshot.decisions,
        snapshot.constraints,
        snapshot.open_items,
        snapshot.next_actions,
    ):
        lines += [line.text for line in group]
    lines += [o.summary for o in snapshot.outcomes if o.summary]
    return "\n".join(lines)
