"""`history/import`: index native sessions from before alp as legacy-unthreaded executions.

Each session file becomes one execution with no thread (`thread_id` NULL, `is_root` 1,
`root_id` itself, `status` settled, kind `interactive`, origin door `import`): alp invents no
thread for work it did not see. Its policy is an honest minimal document,
`{"legacy": true, "runtime": R, "nativeSessionId": S}`, hashed like every policy; it grants
nothing, since nothing runs under it. The session's native id is the key: a re-import syncs
the existing execution from its cursor (adding only what the file gained), and a session
that a root alp started already holds is synced there, not imported twice. A later root that
resumes an imported session is linked to it by the history sync (`link_kind = 'resume'`).

Files are streamed chunk by chunk (`alpd.services.history.execution_copy`), so memory stays
flat whatever the size of the import; progress goes out as `history/progress` notifications.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Final, Literal

import anyio
import msgspec
from anyio.streams.memory import MemoryObjectSendStream

from alpd.domain.ids import EXECUTION_PREFIX
from alpd.errors import InvalidArgument
from alpd.runtimes import claude as claude_runtime
from alpd.runtimes import codex as codex_runtime
from alpd.services.context import Caller
from alpd.services.history.chunks import CHUNK_BYTES, cwd_of
from alpd.services.history.import_batch import (
    Batch,
    NewSession,
    batches,
    legacy_policy,
    read_batch,
    write_batch,
)
from alpd.services.history.progress import ProgressNotifier
from alpd.services.history.sync import HistoryService
from alpd.store.history.imports import (
    LegacyExecution,
    entry_count,
    holder_of_session,
    insert_legacy_execution,
    known_sessions,
    set_legacy_times,
)
from protocol import messages as m

__all__ = ["default_root", "import_sessions", "session_files"]

_UUID: Final = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def default_root(runtime: str, env: dict[str, str]) -> Path:
    """Where the runtime keeps its sessions for this environment."""
    if runtime == "claude":
        return claude_runtime.config_dir(env) / "projects"
    return codex_runtime.codex_home(env) / "sessions"


def session_id_of(runtime: str, path: Path) -> str | None:
    """The native session id a session file is named after (`<id>.jsonl`,
    `rollout-<time>-<id>.jsonl`)."""
    found = _UUID.findall(path.stem)
    if runtime == "claude":
        return path.stem if _UUID.fullmatch(path.stem) else None
    return found[-1] if found else None


def session_files(runtime: str, root: Path) -> Iterator[tuple[Path, str]]:
    """(file, session id) of every session under `root`, in a stable order."""
    for directory, subdirs, files in os.walk(root):
        subdirs.sort()
        for name in sorted(files):
            if not name.endswith(".jsonl"):
                continue
            if runtime == "codex" and not name.startswith("rollout-"):
                continue
            path = Path(directory) / name
            if not _is_regular(path):
                continue  # a FIFO, socket or device named like a session: never opened
            session = session_id_of(runtime, path)
            if session is not None:
                yield path, session


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:
        return False


async def import_sessions(
    history: HistoryService, caller: Caller, params: m.HistoryImportParams
) -> m.HistoryImportResult:
    ex = history.ex
    env = {**ex.environ, **ex.agents.runtime(params.runtime).env}
    root = Path(params.path).expanduser() if params.path else default_root(params.runtime, env)
    try:
        is_dir = root.is_dir()
    except OSError as exc:  # a name over 255 bytes, a path over PATH_MAX
        raise InvalidArgument(f"{str(root)[:80]!r}…: {exc.strerror}", field="path") from exc
    if not is_dir:
        raise InvalidArgument(f"{root} is not a directory of {params.runtime} sessions")
    files = await anyio.to_thread.run_sync(lambda: list(session_files(params.runtime, root)))
    listed = [(path, session, path.stat().st_size) for path, session in files]
    notifier = ProgressNotifier(
        history,
        params.progress_token,
        "import",
        total=len(files),
        total_bytes=sum(size for _, _, size in listed),
    )
    result = m.HistoryImportResult(
        runtime=params.runtime,
        path=str(root),
        files=len(files),
        imported=0,
        updated=0,
        added=0,
        skipped=0,
    )
    # Batch k+1 is read while batch k is written (one batch ahead at most).
    send, receive = anyio.create_memory_object_stream[Batch](0)
    try:
        async with history.d.store.bulk(), anyio.create_task_group() as tg:
            tg.start_soon(_read_ahead, history, params.runtime, listed, send)
            async with receive:
                async for batch in receive:
                    await _write(history, caller, params.runtime, batch, result, notifier)
    except BaseExceptionGroup as group:
        # One failure (the reader's or the writer's) is the import's error, as it was.
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise
    return result


async def _read_ahead(
    history: HistoryService,
    runtime: str,
    files: list[tuple[Path, str, int]],
    send: MemoryObjectSendStream[Batch],
) -> None:
    seen: set[str] = set()
    async with send:
        for group in batches(files):
            candidates = []
            for path, session, size in group:
                if size <= CHUNK_BYTES and session not in seen:
                    candidates.append((path, session, size))
                seen.add(session)
            known = await known_sessions(history.d.store, [session for _, session, _ in candidates])
            fresh = [
                NewSession(path, session, size, history.d.clock.new_id(EXECUTION_PREFIX))
                for path, session, size in candidates
                if session not in known
            ]
            await read_batch(history.reader, runtime, fresh)
            await send.send(Batch(group, fresh))


async def _write(
    history: HistoryService,
    caller: Caller,
    runtime: str,
    batch: Batch,
    result: m.HistoryImportResult,
    notifier: ProgressNotifier,
) -> None:
    whole = [new for new in batch.fresh if new.chunk is not None]
    taken = await write_batch(history, caller, runtime, whole) if whole else []
    written = {new.path: new for new in whole if new not in taken}
    result.imported += len(written)
    result.added += sum(new.added for new in written.values())
    result.skipped += sum(new.chunk.skipped for new in written.values() if new.chunk)
    for path, session, size in batch.files:
        notifier.path = str(path)
        if path in written:
            new = written[path]
            result.sessions.append(
                m.ImportedSession(
                    native_session_id=session,
                    path=str(path),
                    execution_id=new.execution_id,
                    status="imported",
                    entries=new.added,
                    added=new.added,
                    skipped=new.chunk.skipped if new.chunk else 0,
                    level=new.level,
                )
            )
        else:
            await _one_by_one(history, caller, runtime, path, session, result, notifier)
        notifier.base_bytes += size
        notifier.update(
            done=notifier.done + 1,
            added=result.added,
            bytes=notifier.base_bytes,
            force=notifier.done + 1 == notifier.total,
        )


async def _one_by_one(
    history: HistoryService,
    caller: Caller,
    runtime: str,
    path: Path,
    session: str,
    result: m.HistoryImportResult,
    notifier: ProgressNotifier,
) -> None:
    known = await holder_of_session(history.d.store, session, runtime)
    status: Literal["imported", "updated", "known"]
    if known is None:
        execution_id = await _insert_legacy(history, caller, runtime, session, path)
        result.imported += 1
        status = "imported"
    else:
        execution_id = known.execution_id
        if known.thread_id is None:
            result.updated += 1
            status = "updated"
        else:
            result.known += 1
            status = "known"
    report = await history.sync_execution(execution_id, notifier.bytes_progress)
    if known is None:
        await history.write(partial(set_legacy_times, execution_id=execution_id))
    result.added += report.added
    result.skipped += report.skipped
    entries = await entry_count(history.d.store, execution_id)
    result.sessions.append(
        m.ImportedSession(
            native_session_id=session,
            path=str(path),
            execution_id=execution_id,
            status=status,
            entries=entries,
            added=report.added,
            skipped=report.skipped,
            level=report.level,
        )
    )


async def _insert_legacy(
    history: HistoryService, caller: Caller, runtime: str, session: str, path: Path
) -> str:
    clock = history.d.clock
    execution_id = clock.new_id(EXECUTION_PREFIX)
    document, digest = legacy_policy(runtime, session)
    origin = msgspec.json.encode(m.Origin(door="import", by=f"uid:{caller.uid}")).decode()
    cwd = await anyio.to_thread.run_sync(cwd_of, path)
    at = clock.now_iso()
    execution = LegacyExecution(
        id=execution_id,
        owner_uid=caller.uid,
        runtime=runtime,
        origin=origin,
        policy=document,
        policy_hash=digest,
        cwd=cwd,
        session=session,
        transcript_path=str(path),
        at=at,
    )
    await history.write(partial(insert_legacy_execution, execution=execution))
    return execution_id
