"""Where a run keeps its native transcript, for runtimes that announce their session late.

Claude's id is chosen up front; Codex chooses its own, so alpd learns it while the run goes
(from a headless run's first output line, or the rollout an interactive run holds open) or,
at the latest, when it settles. A session another execution already owns is never taken.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path

import aiosqlite

from alpd.domain.runs.agents import AgentsConfig
from alpd.errors import AlpError
from alpd.runtimes.base import RunFacts
from alpd.runtimes.registry import adapter as runtime_adapter
from alpd.store.db import Store
from alpd.supervisor.processes import ProcessIdentity, is_alive


async def discover_sessions(
    store: Store, environ: dict[str, str], agents: AgentsConfig, execution_id: str | None
) -> None:
    """Record the native session id and transcript of runs that announce them late
    (Codex chooses its own id), so history can follow them while they run."""
    sql = (
        "SELECT id, runtime, exec_dir, cwd, pid, pid_start_time, boot_id, started_at, "
        "created_at FROM executions "
        "WHERE (native_session_id IS NULL OR transcript_path IS NULL) AND "
    )
    if execution_id is None:
        rows = await store.fetchall(sql + "status != 'settled'")
    else:
        rows = await store.fetchall(sql + "id = ?", (execution_id,))
    for row in rows:
        try:
            runtime = runtime_adapter(row["runtime"])
        except AlpError:
            continue
        found = runtime.discover_session(_run_facts(row, environ, agents))
        if found is None:
            continue
        # An announced session may be shared (a resumed one); a guessed one must not be.
        if found.guessed and await _claimed(store, row["id"], found.session_id):
            continue
        await _record(store, row["id"], found.session_id, found.transcript_path)


def _run_facts(row: sqlite3.Row, environ: dict[str, str], agents: AgentsConfig) -> RunFacts:
    pid = row["pid"]
    if pid is not None and not is_alive(
        ProcessIdentity(pid, row["pid_start_time"] or 0.0, row["boot_id"] or "")
    ):
        pid = None
    started = datetime.fromisoformat(
        (row["started_at"] or row["created_at"]).replace("Z", "+00:00")
    ).timestamp()
    return RunFacts(
        exec_dir=Path(row["exec_dir"]),
        env={**environ, **agents.runtime(row["runtime"]).env},
        cwd=row["cwd"],
        pid=pid,
        started=started,
    )


async def _claimed(store: Store, execution_id: str, session_id: str) -> bool:
    """Another execution already owns this native session."""
    row = await store.fetchone(
        "SELECT 1 FROM executions WHERE native_session_id = ? AND id != ?",
        (session_id, execution_id),
    )
    return row is not None


async def _record(store: Store, execution_id: str, session_id: str, path: str) -> None:
    async def unit(conn: aiosqlite.Connection) -> None:
        await conn.execute(
            "UPDATE executions SET native_session_id = ?, transcript_path = nullif(?, '') "
            "WHERE id = ?",
            (session_id, path, execution_id),
        )

    await store.write(unit)
