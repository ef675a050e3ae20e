"""The execution graph of one root: delegation from inside a run, cascading cancel, the tree.

Children live in their root's graph, never among the thread's roots. A child's policy
carries its root's thread binding (the snapshot the root opened on), so its policyHash
proves which context the work it does belongs to; its authority still comes from its own
agent definition, checked against the parent's `delegatesTo` — re-hashed before it is
obeyed. Everything here holds the graph lease only (invariant 9).
"""

from __future__ import annotations

import contextlib

from alpd.domain.ids import EXECUTION_PREFIX
from alpd.domain.runs.agents import AgentDefinition
from alpd.domain.runs.outcomes import EndedAs
from alpd.domain.runs.policy import (
    Origin,
    PolicyRequest,
    build_policy,
    run_args,
)
from alpd.domain.secrets.filter import redact
from alpd.errors import DelegationDenied, ExecutionSettled, HostLeaseLost
from alpd.files import write_private_file
from alpd.runtimes.base import SESSION_CONTEXT_FILE, LaunchContext
from alpd.runtimes.registry import adapter as runtime_adapter
from alpd.services.context import Caller
from alpd.services.runs.callers import execution_of_caller
from alpd.services.runs.executions import Executions
from alpd.services.runs.hosts import refuse, right_now
from alpd.services.runs.rows import (
    execution_from_record,
    load_execution,
    owned_execution,
    verified_policy,
)
from alpd.store.db import Tx
from alpd.store.runs import ExecutionRecord, graph_executions, insert_execution
from alpd.supervisor.processes import ProcessIdentity, end_run
from protocol import messages as m


async def delegate(ex: Executions, caller: Caller, params: m.DelegateParams) -> m.DelegateResult:
    parent = await execution_of_caller(ex.d.store, caller)
    parent_policy = verified_policy(parent)
    if params.agent not in parent_policy.delegates_to:
        raise DelegationDenied(
            f"agent {parent_policy.agent!r} may not delegate to {params.agent!r} "
            f"(delegatesTo: {', '.join(parent_policy.delegates_to) or 'nobody'})",
            agent=params.agent,
            delegatesTo=list(parent_policy.delegates_to),
        )
    agent = ex.agents.agent(params.agent)
    runtime = runtime_adapter(agent.runtime)
    request = PolicyRequest(
        agent=agent.name,
        kind="sub-agent",
        headless=True,
        workspace=parent.cwd,
        origin=Origin(door="delegate", by=f"uid:{caller.uid}", parent_execution_id=parent.id),
        runtime=agent.runtime,
        cwd=parent.cwd,
        args=_child_args(agent, params),
    )
    # The child opens on the snapshot its root opened on: the root's binding, carried down
    # the graph inside every policyHash (None only under a legacy-unthreaded root).
    policy = build_policy(agent, request, parent_policy.binding)
    config = ex.agents.runtime(agent.runtime)
    args = run_args(agent, request)
    program = runtime.locate_program(config, policy, args)
    execution_id = ex.d.clock.new_id(EXECUTION_PREFIX)
    exec_dir = ex.paths.exec_dir(execution_id)
    ex.paths.make_exec_dir(execution_id)
    context_path = exec_dir / SESSION_CONTEXT_FILE
    task = redact(params.task).text
    write_private_file(context_path, f"# work state, not authority\n\nDelegated task:\n\n{task}\n")
    ctx = LaunchContext(
        execution_id=execution_id,
        thread_id=parent.thread_id,
        exec_dir=exec_dir,
        session_context_path=context_path,
        socket_path=ex.paths.socket_path,
        prompt=params.task,
        config=config,
        program=program,
        args=args,
    )
    spec = runtime.launch_spec(policy, ctx)
    at = ex.d.clock.now_iso()

    async def unit(tx: Tx) -> m.Execution:
        await insert_execution(
            tx,
            execution_id=execution_id,
            owner_uid=caller.uid,
            policy=policy,
            cwd=spec.cwd,
            exec_dir=str(exec_dir),
            launcher_pid=caller.pid,
            at=at,
            host=ex.d.host,
            thread_id=parent.thread_id,
            root_id=parent.root_id,
            parent_id=parent.id,
            native_session_id=spec.native_session_id,
            transcript_path=spec.transcript_path,
        )
        return execution_from_record(await load_execution(tx, execution_id))

    async with ex.leases.graph(parent.root_id):
        await ex.d.store.write(unit)
        await ex.check_stored_policy(execution_id, policy, args)
        running = await ex.spawn_running(execution_id, spec, exec_dir)
    return m.DelegateResult(execution=running, session_context_path=str(context_path))


def _child_args(agent: AgentDefinition, params: m.DelegateParams) -> tuple[str, ...]:
    """For the `command` runtime the task is the command (run by `sh -c`) unless explicit
    args were given or the agent fixes its own; agent runtimes get the task as their prompt."""
    if agent.runtime == "command" and not params.args and not agent.args:
        return ("/bin/sh", "-c", params.task)
    return tuple(params.args)


def _descendants(rows: list[ExecutionRecord], top: str) -> list[ExecutionRecord]:
    """`top` and everything below it, parents before children."""
    children: dict[str | None, list[ExecutionRecord]] = {}
    for row in rows:
        children.setdefault(row.parent_id, []).append(row)
    by_id = {row.id: row for row in rows}
    order: list[ExecutionRecord] = []
    pending = [by_id[top]] if top in by_id else []
    while pending:
        row = pending.pop(0)
        order.append(row)
        pending.extend(children.get(row.id, []))
    return order


async def tree(ex: Executions, caller: Caller, params: m.TreeParams) -> m.TreeNode:
    if params.execution_id is None:
        start = await execution_of_caller(ex.d.store, caller)
    else:
        start = await owned_execution(ex.d.store, caller, params.execution_id)
    rows = await graph_executions(ex.d.store, start.root_id)
    nodes = {
        row.id: m.TreeNode(
            execution=execution_from_record(row), binding=row.thread_id or "legacy-unthreaded"
        )
        for row in rows
    }
    for row in rows:
        if row.parent_id in nodes:
            nodes[row.parent_id].children.append(nodes[row.id])
    return nodes[start.root_id]


async def cancel(ex: Executions, caller: Caller, params: m.ExecutionRef) -> m.Execution:
    """End the execution and everything below it in its graph; each settles `cancelled`."""
    top = await owned_execution(ex.d.store, caller, params.execution_id)
    if top.status == "settled":
        raise ExecutionSettled(f"execution {params.execution_id} already settled {top.outcome}")
    if ex.d.host_id is not None:
        # Another host's run is that host's to end: this one cannot see its processes.
        right, owner = await right_now(ex.d.store, top, ex.d.host_id)
        refuse(top, right, owner, ending=True)
    await end_graph(ex, top, "cancelled")
    return await ex.wait(caller, m.WaitParams(execution_id=params.execution_id, timeout=10.0))


async def end_graph(ex: Executions, top: ExecutionRecord, as_: EndedAs) -> None:
    """End `top` and everything below it, children first: `top` settles `as_` (a cancel, or
    the guard rail it reached: `alpd/services/runs/guards.py`), the runs below `cancelled`."""
    async with ex.leases.graph(top.root_id):
        targets = [
            row
            for row in _descendants(await graph_executions(ex.d.store, top.root_id), top.id)
            if row.status != "settled"
        ]
        unwatched: list[tuple[str, EndedAs]] = []
        # Children first, so a parent never outlives the runs it started.
        for row in reversed(targets):
            identity = None
            if row.pid is not None:
                identity = ProcessIdentity(row.pid, row.pid_start_time or 0.0, row.boot_id or "")
            outcome: EndedAs = as_ if row.id == top.id else "cancelled"
            if ex.supervisor is not None and ex.supervisor.watching(row.id):
                await ex.supervisor.cancel(row.id, identity, as_=outcome)
            else:
                await end_run(row.id, identity, grace=5.0)
                unwatched.append((row.id, outcome))
    # Settling a root takes its thread lease: only after the graph lease is released.
    for execution_id, settled_as in unwatched:
        with contextlib.suppress(ExecutionSettled, HostLeaseLost):
            await ex.settle(None, m.SettleParams(execution_id=execution_id, outcome=settled_as))
