"""The copy of one execution's native transcript into `history_entries`, incrementally.

One sync of an execution reads its transcript from the cursor's byte offset in bounded chunks
(`CHUNK_BYTES`, a longer line up to `MAX_LINE_BYTES`), parses each chunk with the pure reader
of its format, **redacts every stored text** (prompts, replies, tool inputs, output tails),
and writes the chunk's rows, the advanced cursor and the execution's usage/cost in **one**
transaction (`alpd.store.history.sync.commit_chunk`, one hop to the writer's thread) — so a
crash at any point leaves rows and cursor agreeing: no duplicates (rows are also keyed by
native id), no gaps. Reading, parsing and redacting run in a worker thread; only the write
is on the store's writer.

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
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Final

import anyio
import msgspec
import structlog

from alpd.files import open_regular
from alpd.runtimes import claude as claude_runtime
from alpd.runtimes import codex as codex_runtime
from alpd.services.history.chunks import Chunk, Source, prefix_digest_of, read_chunk
from alpd.services.history.summary import price_cost
from alpd.store.budgets import record_windows
from alpd.store.db import Store
from alpd.store.history.sync import (
    Cursor,
    CursorMoved,
    SyncTarget,
    commit_chunk,
    cursor_seed,
    first_holder,
    load_cursor,
    resumed_holder,
    set_history_level,
    set_level_without_transcript,
    stored_offset,
    sync_target,
)
from protocol import messages as m

if TYPE_CHECKING:
    from alpd.services.history.sync import HistoryService

__all__ = ["READERS", "Progress", "SyncReport", "sniff_format", "sync_one"]

READERS: Final = ("claude", "codex")

log = structlog.get_logger("alpd.history")

Progress = Callable[[int], None]


@dataclass(slots=True)
class SyncReport:
    """What one sync of one execution did."""

    execution_id: str
    level: m.HistoryLevel | None
    added: int = 0
    skipped: int = 0
    consumed: int = 0


_USAGE = msgspec.json.Decoder(m.Usage)


def _plus(a: m.Usage, b: m.Usage) -> m.Usage:
    return m.Usage(
        input_tokens=a.input_tokens + b.input_tokens,
        output_tokens=a.output_tokens + b.output_tokens,
        cache_read_tokens=a.cache_read_tokens + b.cache_read_tokens,
        cache_creation_tokens=a.cache_creation_tokens + b.cache_creation_tokens,
    )


async def sync_one(
    history: HistoryService, execution_id: str, progress: Progress | None
) -> SyncReport:
    """Copy what is new in the execution's transcript (the caller serialises the syncs of
    one execution)."""
    store = history.d.store
    target = await sync_target(store, execution_id)
    if target is None:
        return SyncReport(execution_id, None)
    cursor = await load_cursor(store, execution_id)
    if cursor is None:
        source = _locate(history, target)
        if source is None or not os.path.exists(source.path):
            return await _no_transcript(history, target, source)
        cursor = await _new_cursor(store, target, source)
    source = Source(cursor.path, cursor.format)
    report = SyncReport(execution_id, target.history_level, consumed=cursor.consumed)
    try:
        size = os.stat(source.path).st_size
    except OSError:
        return report  # the file went away after (part of) it was copied: keep the copy
    if size < cursor.consumed:
        log.warning(
            "transcript_shrank", execution=execution_id, size=size, consumed=cursor.consumed
        )
        _read_again(cursor)
    elif cursor.consumed and cursor.prefix_digest is not None:
        try:
            now = await anyio.to_thread.run_sync(prefix_digest_of, source.path, cursor.consumed)
        except OSError as exc:
            log.warning("transcript_unreadable", execution=execution_id, error=str(exc))
            return report
        if now != cursor.prefix_digest:
            # Not the bytes that were read (a complete copy over a damaged one, a line
            # rewritten): read it all again. Entries are keyed by native id, so what is
            # stored already is not stored twice; the level becomes this copy's.
            log.warning("transcript_changed", execution=execution_id, consumed=cursor.consumed)
            _read_again(cursor)
    expected = await stored_offset(store, execution_id)
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
            report.added += await _commit(history, target, cursor, chunk, expected)
        except CursorMoved:
            # Another writer moved it (our own syncs of one execution are serialised):
            # the next pass resumes from wherever it is now.
            return report
        expected = cursor.consumed
        if progress is not None:
            progress(cursor.consumed)
        if chunk.at_end:
            break
    level: m.HistoryLevel = "partial" if cursor.skipped else "complete"
    if level != target.history_level or cursor.skipped != target.history_skipped:
        await history.write(
            partial(
                set_history_level, execution_id=execution_id, level=level, skipped=cursor.skipped
            )
        )
    report.level = level
    report.skipped = cursor.skipped
    report.consumed = cursor.consumed
    return report


def _read_again(cursor: Cursor) -> None:
    """Start the cursor over: what it carried was counted from the bytes that changed."""
    cursor.consumed, cursor.skipped, cursor.redactions = 0, 0, 0
    cursor.session_id = cursor.model = cursor.usage = cursor.prefix_digest = None
    cursor.cost_usd = None


async def _commit(
    history: HistoryService, target: SyncTarget, cursor: Cursor, chunk: Chunk, expected: int | None
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
        updated_at=history.d.clock.now_iso(),
        prefix_digest=chunk.prefix,
    )
    if chunk.parent_session_id and updated.links_to is None:
        parent = await first_holder(history.d.store, chunk.parent_session_id, target.id)
        if parent is not None:
            updated.links_to, updated.link_kind = parent, "fork"
    if cost is None:
        prices = history.ex.agents.runtime(target.runtime).prices
        cost = price_cost(usage, updated.model, prices)
    added = await history.write_blocking(
        partial(commit_chunk, cursor=updated, expected=expected, rows=chunk.rows, cost=cost)
    )
    if chunk.windows:
        await history.write(
            partial(
                record_windows,
                execution_id=target.id,
                runtime=target.runtime,
                windows=chunk.windows,
                at=updated.updated_at,
            )
        )
    for name in Cursor.__slots__:
        setattr(cursor, name, getattr(updated, name))
    if chunk.redactions:
        log.info("history_redacted", execution=target.id, findings=chunk.redactions)
    return added


async def _no_transcript(
    history: HistoryService, target: SyncTarget, source: Source | None
) -> SyncReport:
    level: m.HistoryLevel | None = None
    if source is None and target.runtime not in READERS and not target.transcript_path:
        level = "unsupported"
    elif target.status == "settled":
        level = "final-only"
    if level is not None and level != target.history_level:
        await history.write(
            partial(set_level_without_transcript, execution_id=target.id, level=level)
        )
    return SyncReport(target.id, level)


# locating the transcript, starting a cursor


def _locate(history: HistoryService, target: SyncTarget) -> Source | None:
    runtime, path, session = target.runtime, target.transcript_path, target.native_session_id
    if path:
        fmt = runtime if runtime in READERS else sniff_format(path)
        return Source(path, fmt) if fmt else None
    if not session or runtime not in READERS:
        return None
    env = {**history.ex.environ, **history.ex.agents.runtime(runtime).env}
    if runtime == "codex":
        found = codex_runtime.find_rollout(env, session)
    else:
        projects = claude_runtime.config_dir(env) / "projects"
        found = next(iter(sorted(projects.glob(f"*/{session}.jsonl"))), None)
    return Source(str(found), runtime) if found is not None else None


async def _new_cursor(store: Store, target: SyncTarget, source: Source) -> Cursor:
    cursor = Cursor(execution_id=target.id, path=source.path, format=source.format)
    if target.native_session_id:
        earlier = await resumed_holder(
            store, target.native_session_id, target.id, target.created_at
        )
        if earlier is not None:
            cursor.links_to, cursor.link_kind = earlier, "resume"
    # A resumed session appends to the same file: start where its copy ended.
    seed = await cursor_seed(store, source.path, target.id)
    if seed is not None and cursor.links_to is not None:
        cursor.consumed, cursor.session_id, cursor.model, cursor.prefix_digest = seed
    return cursor


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
