"""`history/import`: index native sessions from before alp as legacy-unthreaded executions.

Each session file becomes one execution with no thread (`thread_id` NULL, `is_root` 1,
`root_id` itself, `status` settled, kind `interactive`, origin door `import`): alp invents no
thread for work it did not see. Its policy is an honest minimal document,
`{"legacy": true, "runtime": R, "nativeSessionId": S}`, hashed like every policy; it grants
nothing, since nothing runs under it. The session's native id is the key: a re-import syncs
the existing execution from its cursor (adding only what the file gained), and a session
that a root alp started already holds is synced there, not imported twice. A later root that
resumes an imported session is linked to it by the history sync (`link_kind = 'resume'`).

Files are streamed chunk by chunk (`alpd.services.history`), so memory stays flat whatever the
size of the import; progress goes out as `history/progress` notifications.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Final, Literal

import aiosqlite
import anyio
import msgspec

from alpd.domain.canonical import canonical_json, sha256_digest
from alpd.domain.ids import EXECUTION_PREFIX
from alpd.errors import InvalidArgument
from alpd.files import open_regular
from alpd.runtimes import claude as claude_runtime
from alpd.runtimes import codex as codex_runtime
from alpd.services.context import Caller
from alpd.services.history import HistoryService, ProgressNotifier
from protocol import messages as m

__all__ = ["default_root", "import_sessions", "session_files"]

_UUID: Final = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_CWD_PROBE_BYTES: Final = 256 * 1024


class _CwdProbe(msgspec.Struct):
    cwd: str | None = None
    payload: msgspec.Raw = msgspec.Raw()


_PROBE = msgspec.json.Decoder(_CwdProbe)


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


def _cwd_of(path: Path) -> str:
    """The working directory the session ran in, from its first lines ('' if not said)."""
    try:
        with open_regular(path) as f:
            head = f.read(_CWD_PROBE_BYTES)
    except OSError:
        return ""
    for line in head.split(b"\n")[:50]:
        try:
            probe = _PROBE.decode(line)
        except msgspec.DecodeError:
            continue
        if probe.cwd:
            return probe.cwd
        if probe.payload:
            try:
                inner = _PROBE.decode(probe.payload)
            except msgspec.DecodeError:
                continue
            if inner.cwd:
                return inner.cwd
    return ""


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
    sizes = [path.stat().st_size for path, _ in files]
    notifier = ProgressNotifier(
        history, params.progress_token, "import", total=len(files), total_bytes=sum(sizes)
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
    for index, ((path, session), size) in enumerate(zip(files, sizes, strict=True)):
        notifier.path = str(path)
        known = await history.d.store.fetchone(
            "SELECT id, thread_id FROM executions WHERE native_session_id = ? AND runtime = ? "
            "ORDER BY created_at LIMIT 1",
            (session, params.runtime),
        )
        status: Literal["imported", "updated", "known"]
        if known is None:
            execution_id = await _insert_legacy(history, caller, params.runtime, session, path)
            result.imported += 1
            status = "imported"
        else:
            execution_id = known["id"]
            if known["thread_id"] is None:
                result.updated += 1
                status = "updated"
            else:
                result.known += 1
                status = "known"
        report = await history.sync_execution(execution_id, notifier.bytes_progress)
        if known is None:
            await _set_times(history, execution_id)
        result.added += report.added
        result.skipped += report.skipped
        entries = await history.d.store.fetchone(
            "SELECT count(*) FROM history_entries WHERE execution_id = ?", (execution_id,)
        )
        result.sessions.append(
            m.ImportedSession(
                native_session_id=session,
                path=str(path),
                execution_id=execution_id,
                status=status,
                entries=int(entries[0]) if entries else 0,
                added=report.added,
                skipped=report.skipped,
                level=report.level,
            )
        )
        notifier.base_bytes += size
        notifier.update(
            done=index + 1,
            added=result.added,
            bytes=notifier.base_bytes,
            force=index + 1 == len(files),
        )
    return result


async def _insert_legacy(
    history: HistoryService, caller: Caller, runtime: str, session: str, path: Path
) -> str:
    clock = history.d.clock
    execution_id = clock.new_id(EXECUTION_PREFIX)
    document = canonical_json({"legacy": True, "runtime": runtime, "nativeSessionId": session})
    origin = msgspec.json.encode(m.Origin(door="import", by=f"uid:{caller.uid}")).decode()
    cwd = await anyio.to_thread.run_sync(_cwd_of, path)
    at = clock.now_iso()

    async def unit(conn: aiosqlite.Connection) -> None:
        await conn.execute(
            "INSERT INTO executions (id, owner_uid, thread_id, is_root, root_id, runtime, "
            "agent, kind, origin, headless, status, policy, policy_hash, cwd, exec_dir, "
            "native_session_id, transcript_path, created_at, settled_at) "
            "VALUES (?, ?, NULL, 1, ?, ?, ?, 'interactive', ?, 0, 'settled', ?, ?, ?, '', "
            "?, ?, ?, ?)",
            (
                execution_id,
                caller.uid,
                execution_id,
                runtime,
                runtime,
                origin,
                document,
                sha256_digest(document),
                cwd,
                session,
                str(path),
                at,
                at,
            ),
        )

    await history.write(unit)
    return execution_id


async def _set_times(history: HistoryService, execution_id: str) -> None:
    """A legacy execution ran when its entries were written, not when it was imported."""

    async def unit(conn: aiosqlite.Connection) -> None:
        await conn.execute(
            "UPDATE executions SET "
            "started_at = coalesce((SELECT min(ts) FROM history_entries "
            "WHERE execution_id = ?1), started_at), "
            "settled_at = coalesce((SELECT max(ts) FROM history_entries "
            "WHERE execution_id = ?1), settled_at) WHERE id = ?1",
            (execution_id,),
        )

    await history.write(unit)
