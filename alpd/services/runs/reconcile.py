"""Reconcile: settle roots whose process is gone, re-adopt headless runs after a restart.

Runs before `thread/show` and `thread/continue`, on `thread/reconcile`, at start and
periodically. A root whose process vanished before settling is settled `interrupted`
(invariant 8); its checkpoint is projected by that settle, so the next root sees its pins.

With several hosts on one database (docs/many-machines.md), a host reconciles its own roots
only; another host's are settled `interrupted` here once that host was taken over (its
processes are never looked at or signalled), and left alone otherwise.

Per kind: a *headless* run whose process is alive but unwatched (alpd restarted) is re-adopted
and watched to its end; one that ended while alpd was down is settled from its
`exit-status` file. An *interactive* run belongs to the client's terminal: when its process
(or, before attach, its launching client) is gone, it is `interrupted`. A process that has
ended but is still a zombie of its launching client is left alone: the client holds its exit
status (`alp` collects it only after settling) and settles the root with it.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Final, Protocol

import psutil
import structlog

from alpd.domain.hosts.lease import Right
from alpd.domain.runs.outcomes import outcome_of
from alpd.errors import ExecutionSettled, HostLeaseLost, HostNotOwner
from alpd.services.context import Caller, Daemon
from alpd.services.runs.hosts import right_now
from alpd.store.hosts import hosts
from alpd.store.runs import ExecutionRecord, unsettled_executions
from alpd.supervisor.processes import ProcessIdentity, ended_uncollected_by, is_alive
from alpd.supervisor.supervisor import Supervisor, output_tail, read_exit_status
from protocol import messages as m

#: a headless root may sit `reserved` this long while alpd spawns it
SPAWN_GRACE_SECONDS: Final = 30.0

log = structlog.get_logger("alpd.reconcile")


class Settling(Protocol):
    """What reconcile needs of the executions service (`Executions`): the daemon's store and
    clock, the supervisor watching headless runs, and settle."""

    d: Daemon
    supervisor: Supervisor | None

    async def settle(
        self, caller: Caller | None, params: m.SettleParams, *, output_tail: str | None = None
    ) -> m.Execution: ...


def _identity(row: ExecutionRecord) -> ProcessIdentity | None:
    if row.pid is None:
        return None
    return ProcessIdentity(row.pid, row.pid_start_time or 0.0, row.boot_id or "")


async def reconcile(executions: Settling, thread_id: str | None) -> list[str]:
    """Settle or adopt every unsettled execution (of one thread, or all); the ids settled."""
    store = executions.d.store
    rows = await unsettled_executions(store, thread_id)
    me = executions.d.host_id
    known = {host.id: host for host in await hosts(store)} if me is not None and rows else {}
    settled: list[str] = []
    for row in rows:
        right: Right = "own" if me is None else (await right_now(store, row, me, known))[0]
        if right in ("elsewhere", "forfeited"):
            continue  # its host's (or, taken from this one, the taker's)
        tail = None
        if right == "orphan":
            # Its host was taken over: its processes are not ours to see or to signal.
            params = m.SettleParams(execution_id=row.id, outcome="interrupted")
        else:
            outcome = _verdict(executions, row)
            if outcome is None:
                continue
            exec_dir = Path(row.exec_dir)
            exit_code = read_exit_status(exec_dir) if row.headless else None
            if row.headless and exit_code is not None:
                outcome = outcome_of(exit_code, ended_as=None)
            params = m.SettleParams(execution_id=row.id, outcome=outcome, exit_code=exit_code)
            tail = output_tail(exec_dir) or None
        try:
            await executions.settle(None, params, output_tail=tail)
        except (ExecutionSettled, HostLeaseLost, HostNotOwner):
            continue
        log.info("reconciled", execution=row.id, outcome=outcome)
        settled.append(row.id)
    return settled


def _verdict(executions: Settling, row: ExecutionRecord) -> m.Outcome | None:
    """`interrupted` when the run is gone; None while it lives (adopting it if need be)."""
    supervisor = executions.supervisor
    identity = _identity(row)
    if row.headless:
        if supervisor is not None and supervisor.watching(row.id):
            return None
        if identity is None:
            age = executions.d.clock.now().timestamp() - _epoch(row.created_at)
            return "interrupted" if age > SPAWN_GRACE_SECONDS else None
        if is_alive(identity):
            if supervisor is not None:
                supervisor.adopt(row.id, identity, Path(row.exec_dir))
            return None
        return "interrupted"
    if identity is not None:
        if is_alive(identity) or ended_uncollected_by(identity, row.launcher_pid):
            # Ended but not yet collected by its launching client: the client has its exit
            # status and settles the root with it (a run that exited 0 is `completed`).
            return None
        return "interrupted"
    launcher = row.launcher_pid
    return None if launcher is not None and psutil.pid_exists(launcher) else "interrupted"


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
