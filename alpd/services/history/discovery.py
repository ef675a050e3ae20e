"""Where a run keeps its native transcript, for runtimes that announce their session late.

Claude's id is chosen up front; Codex chooses its own, so alpd learns it while the run goes
(from a headless run's first output line, or the rollout an interactive run holds open) or,
at the latest, when it settles. A session another execution already owns is never taken.
"""

from __future__ import annotations

from datetime import datetime
from functools import partial
from pathlib import Path

from alpd.domain.runs.agents import AgentsConfig
from alpd.errors import AlpError
from alpd.runtimes.base import RunFacts
from alpd.runtimes.registry import adapter as runtime_adapter
from alpd.store.db import Store, Tx
from alpd.store.history.sessions import LateRun, late_runs, record_session, session_claimed
from alpd.supervisor.processes import ProcessIdentity, is_alive


async def discover_sessions(
    store: Store, environ: dict[str, str], agents: AgentsConfig, execution_id: str | None
) -> None:
    """Record the native session id and transcript of runs that announce them late
    (Codex chooses its own id), so history can follow them while they run."""
    for run in await late_runs(store, execution_id):
        try:
            runtime = runtime_adapter(run.runtime)
        except AlpError:
            continue
        found = runtime.discover_session(_run_facts(run, environ, agents))
        if found is None:
            continue
        # An announced session may be shared (a resumed one); a guessed one must not be.
        if found.guessed and await session_claimed(store, run.id, found.session_id):
            continue
        await store.write(partial(_record, run.id, found.session_id, found.transcript_path))


async def _record(execution_id: str, session_id: str, path: str, tx: Tx) -> None:
    await record_session(tx, execution_id, session_id, path)


def _run_facts(run: LateRun, environ: dict[str, str], agents: AgentsConfig) -> RunFacts:
    pid = run.pid
    if pid is not None and not is_alive(
        ProcessIdentity(pid, run.pid_start_time or 0.0, run.boot_id or "")
    ):
        pid = None
    started = datetime.fromisoformat(
        (run.started_at or run.created_at).replace("Z", "+00:00")
    ).timestamp()
    return RunFacts(
        exec_dir=Path(run.exec_dir),
        env={**environ, **agents.runtime(run.runtime).env},
        cwd=run.cwd,
        pid=pid,
        started=started,
    )
