"""Which execution a caller is inside, found from the kernel's view of its process ancestry.

Never from `ALP_EXECUTION_ID`: that variable is a label anyone can set. The peer pid comes
from SO_PEERCRED; we walk its parents and look for the supervised pid of a running
execution, checking the recorded start time so a reused pid cannot pose as the run.
"""

from __future__ import annotations

import os

from alpd.errors import NotFromARun, PinOutsideExecution
from alpd.services.context import Caller
from alpd.store.db import Store
from alpd.store.runs import (
    ExecutionRecord,
    execution_by_id,
    settled_with_pids,
    with_live_process,
)
from alpd.supervisor import cgroups
from alpd.supervisor.processes import ProcessIdentity, ancestry, is_alive, label_of


def _identity(pid: int, row: ExecutionRecord) -> ProcessIdentity:
    """The identity of `row`'s process, whose recorded pid is `pid`."""
    return ProcessIdentity(pid, row.pid_start_time or 0.0, row.boot_id or "")


async def execution_of_caller(store: Store, caller: Caller) -> ExecutionRecord:
    in_cgroup = await _by_cgroup(store, caller)
    if in_cgroup is not None:
        return in_cgroup
    chain = ancestry(caller.pid)
    rows = await with_live_process(store, caller.uid)
    by_pid = {row.pid: row for row in rows if row.pid is not None}
    # An interactive run can pin before its client has attached it (the client starts the
    # runtime, then registers its pid): until then the client itself, the launcher, stands
    # for the run — for its descendants only, never for the client's own calls.
    by_launcher = {row.launcher_pid: row for row in rows if row.status == "reserved"}
    # Processes of runs that have settled but still live (settled by their client while
    # running, or left behind): what descends from them belongs to a finished run, and
    # must not be taken for a run further up (a long-lived launcher's next root).
    settled = await _settled_in(store, caller, chain)
    for depth, pid in enumerate(chain):
        row = by_pid.get(pid)
        if row is not None and is_alive(_identity(pid, row)):
            return row
        finished = settled.get(pid)
        if finished is not None and is_alive(_identity(pid, finished)):
            raise PinOutsideExecution(
                f"this process belongs to execution {finished.id}, which has settled "
                f"({finished.outcome}); a finished run can no longer pin or delegate",
                pid=caller.pid,
                executionId=finished.id,
            )
        launched = by_launcher.get(pid)
        if launched is not None and depth > 0:
            return launched
    raise PinOutsideExecution(
        "this process is not inside a running alp execution; pins and delegation work only "
        "from the process tree of a run (`alp thread continue …`)",
        pid=caller.pid,
    )


async def _by_cgroup(store: Store, caller: Caller) -> ExecutionRecord | None:
    """The run whose cgroup holds the caller (alpd.supervisor.cgroups), which no setsid or
    double fork leaves; None when runs have no cgroups or the caller is in none of them. A
    settled run's cgroup is PIN_OUTSIDE_EXECUTION, as its processes are found by ancestry."""
    groups = cgroups.active()
    execution_id = groups.run_of(caller.pid) if groups is not None else None
    if execution_id is None:
        return None
    row = await execution_by_id(store, execution_id)
    if row is None or row.owner_uid != caller.uid:
        return None
    if row.status == "settled":
        raise PinOutsideExecution(
            f"this process belongs to execution {row.id}, which has settled "
            f"({row.outcome}); a finished run can no longer pin or delegate",
            pid=caller.pid,
            executionId=row.id,
        )
    return row


async def _settled_in(store: Store, caller: Caller, chain: list[int]) -> dict[int, ExecutionRecord]:
    """Settled executions of the caller whose recorded pid is one of `chain`'s."""
    if not chain:
        return {}
    rows = await settled_with_pids(store, caller.uid, chain)
    return {row.pid: row for row in rows if row.pid is not None}


async def run_of_caller(store: Store, caller: Caller) -> ExecutionRecord | None:
    """The run the caller is part of, for refusing what only the person may do (None: the
    person). Wider than `execution_of_caller`, which grants: a process of a settled run
    still counts as that run, and so does a process labelled with a run of the caller's
    (`ALP_EXECUTION_ID`) that has no cgroup holding its processes: a label grants nothing,
    but claiming one only refuses yourself, and it is what a setsid'd or double-forked
    process of a run keeps where no cgroup holds it (the fallback).
    The daemon's own door (the web page, alpd's pid) is the person's."""
    if caller.pid == os.getpid():
        return None
    try:
        return await execution_of_caller(store, caller)
    except PinOutsideExecution as exc:
        settled = exc.data.get("executionId")
        if isinstance(settled, str):
            return await execution_by_id(store, settled)
    labelled = label_of(caller.pid)
    if labelled is None:
        return None
    record = await execution_by_id(store, labelled)
    if record is None or record.owner_uid != caller.uid:
        return None
    groups = cgroups.active()
    if groups is not None and groups.members(record.id):
        # The run's processes are known by its cgroup, and the caller is in none of them:
        # the label is only a label (a person may have set it by hand).
        return None
    return record


async def refuse_runs(store: Store, caller: Caller, what: str) -> None:
    """NOT_FROM_A_RUN when a run asks for what only the person may do (`what`)."""
    run = await run_of_caller(store, caller)
    if run is not None:
        raise NotFromARun(
            f"execution {run.id} asked to {what}: only the person does that, from their own "
            "shell, never a run",
            executionId=run.id,
            threadId=run.thread_id,
        )


async def refuse_other_threads(
    store: Store, caller: Caller, thread_id: str | None, what: str
) -> None:
    """NOT_FROM_A_RUN when a run aims `what` at a thread other than its own (`thread_id`;
    None: at no thread it belongs to). A run steers only its own thread; another thread is
    reached by a handoff, which the target's loop guards and inbox stand in front of."""
    run = await run_of_caller(store, caller)
    if run is None or (thread_id is not None and thread_id == run.thread_id):
        return
    raise NotFromARun(
        f"execution {run.id} of thread {run.thread_id} asked to {what} thread {thread_id}: a "
        "run steers only its own thread; to reach another, hand off "
        "(`alp handoff THREAD -- SUMMARY`)",
        executionId=run.id,
        threadId=run.thread_id,
        target=thread_id,
    )
