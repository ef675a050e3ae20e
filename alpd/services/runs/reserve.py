"""The transaction that reserves root n+1 of a thread (`thread/continue`, and every root
alp opens in the background), as one store unit run under the thread's lease.

In order: the thread is the caller's and open (THREAD_CLOSED); its revision is bumped first —
of two continues that read the same revision, the loser learns it is stale
(THREAD_REVISION_CONFLICT), not merely that a root runs; no root may be unsettled
(THREAD_BUSY); neither the thread nor the schedule firing it is at its hard budget
(BUDGET_EXCEEDED, docs/budgets.md); the whole context chain is verified from genesis (every
root's binding against it); the new root's policy is bound to the head snapshot; its session
context (the snapshot, then the derived sections: recap, tail, what woke it, then the
memories chosen for it, `alpd.services.memory.root_context`) is written into its run
directory; the root is inserted `reserved` with its seed checkpoint, the record of what
derived context and which memory versions it was given, and the caller's own writes
(`in_unit`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any, NamedTuple

import msgspec

from alpd.domain.budgets.levels import describe, level
from alpd.domain.memory.settings import MemorySettings
from alpd.domain.recap.config import RecapSettings
from alpd.domain.runs.agents import AgentDefinition, RuntimeConfig
from alpd.domain.runs.policy import Policy, PolicyRequest, ThreadBinding, build_policy, run_args
from alpd.domain.threads.context import seed_checkpoint
from alpd.domain.threads.session_context import render_session_context
from alpd.errors import BudgetExceeded, ThreadClosed
from alpd.files import write_private_file
from alpd.runtimes.base import SESSION_CONTEXT_FILE, LaunchContext, LaunchSpec, RuntimeAdapter
from alpd.services.context import Caller
from alpd.services.memory.root_context import memory_for_root, record_given, thread_words
from alpd.services.recap.root_context import derived_context, record_derived
from alpd.services.runs.dirs import Paths
from alpd.services.runs.rows import execution_from_record, load_execution
from alpd.services.threads.lifecycle import check_owner, refuse_if_busy
from alpd.services.threads.snapshots import load_chain
from alpd.store.budgets import (
    StoredBudget,
    budget_rows,
    budgets_for_root,
    windows_of,
    with_window,
)
from alpd.store.db import Store, Tx, Unit
from alpd.store.runs import ConstraintRefused, insert_execution, next_sequence
from alpd.store.threads.shell import bump_revision, load_thread
from alpd.store.threads.snapshots import save_checkpoint
from protocol import messages as m

#: more writes in the same transaction that reserves a root (given the root's id)
InUnit = Callable[[Tx, str], Awaitable[None]]


class Prepared(NamedTuple):
    agent: AgentDefinition
    runtime: RuntimeAdapter
    request: PolicyRequest
    config: RuntimeConfig
    program: str


#: the reserved root as the caller gets it, what launches it, and the policy it was built with
Reserved = tuple[m.ContinueResult, LaunchSpec, Policy]


def reserve_root(
    caller: Caller,
    params: m.ContinueParams,
    prepared: Prepared,
    *,
    execution_id: str,
    at: str,
    paths: Paths,
    store: Store,
    recap: RecapSettings,
    memory: MemorySettings,
    addendum: str | None,
    in_unit: InUnit | None,
    thread_sets: dict[str, Any] | None = None,
    host: tuple[str, str] | None = None,
) -> Unit[Reserved]:
    """The store unit reserving root `execution_id` (module docstring)."""
    agent, runtime, request, config, program = prepared
    exec_dir = paths.exec_dir(execution_id)

    async def unit(tx: Tx) -> Reserved:
        thread_row = await load_thread(tx, params.thread_id)
        check_owner(thread_row, caller)
        if thread_row.status != "open":
            raise ThreadClosed(
                f"thread {params.thread_id} is {thread_row.status}; start a new one with `alp`",
                threadId=params.thread_id,
            )
        # The revision first: of two continues that read the same revision, the loser
        # learns it is stale (THREAD_REVISION_CONFLICT), not merely that a root runs.
        await bump_revision(
            tx,
            params.thread_id,
            "continued",
            at,
            if_revision=params.if_revision,
            detail=execution_id,
            sets=thread_sets,
        )
        await refuse_if_busy(tx, params.thread_id)
        await refuse_over_budget(
            tx, params.thread_id, request.origin.schedule_id, runtime=runtime.name, at=at
        )
        # The whole chain from genesis and every root's binding against it: nothing is
        # built on a context rewritten anywhere in its history.
        snapshot, digest = await load_chain(tx, params.thread_id, thread_row.context_revision)
        binding = ThreadBinding(
            id=params.thread_id, context_revision=snapshot.revision, context_digest=digest
        )
        policy = build_policy(agent, request, binding)
        sequence = await next_sequence(tx, params.thread_id)
        paths.make_exec_dir(execution_id)
        context_path = exec_dir / SESSION_CONTEXT_FILE
        rendered = render_session_context(snapshot, thread_title=thread_row.title)
        derived = await derived_context(tx, store, params.thread_id, agent, recap, addendum)
        given = await memory_for_root(
            tx,
            owner_uid=thread_row.owner_uid,
            workspace=thread_row.workspace,
            words=thread_words(snapshot, thread_row.title, params.prompt),
            agent=agent,
            settings=memory,
            now=at,
        )
        section = "\n" + given.text if given.text else ""
        write_private_file(context_path, rendered + derived.text + section)
        ctx = LaunchContext(
            execution_id=execution_id,
            thread_id=params.thread_id,
            exec_dir=exec_dir,
            session_context_path=context_path,
            socket_path=paths.socket_path,
            prompt=params.prompt,
            config=config,
            program=program,
            args=run_args(agent, request),
        )
        spec = runtime.launch_spec(policy, ctx)
        try:
            await insert_execution(
                tx,
                execution_id=execution_id,
                owner_uid=caller.uid,
                policy=policy,
                cwd=spec.cwd,
                exec_dir=str(exec_dir),
                launcher_pid=caller.pid,
                at=at,
                thread_id=params.thread_id,
                root_id=execution_id,
                sequence=sequence,
                native_session_id=spec.native_session_id,
                transcript_path=spec.transcript_path,
                host=host,
            )
        except ConstraintRefused:
            # `one_unsettled_root` refused a second unsettled root: the database is the
            # last word on invariant 4, and its refusal has the same name as the check's.
            await refuse_if_busy(tx, params.thread_id)
            raise
        await save_checkpoint(tx, seed_checkpoint(execution_id, snapshot), at)
        await record_derived(tx, execution_id, derived)
        await record_given(tx, execution_id, given)
        if in_unit is not None:
            await in_unit(tx, execution_id)
        thread = msgspec.structs.replace(
            await load_thread(tx, params.thread_id), busy_root=execution_id
        )
        execution = execution_from_record(await load_execution(tx, execution_id))
        launch = (
            None if params.headless else m.LaunchSpec(argv=spec.argv, env=spec.env, cwd=spec.cwd)
        )
        result = m.ContinueResult(
            thread=thread,
            execution=execution,
            session_context_path=str(context_path),
            launch=launch,
        )
        return result, spec, policy

    return unit


__all__ = [
    "InUnit",
    "Prepared",
    "Reserved",
    "check_budgets",
    "refuse_over_budget",
    "reserve_root",
]


async def refuse_over_budget(
    tx: Tx, thread_id: str, schedule_id: str | None, *, runtime: str, at: str
) -> None:
    """BUDGET_EXCEEDED if the thread, or the schedule firing this root, is at its hard
    budget: the spend counts every execution so far, so the next root would only add to it;
    a window budget compares the window `runtime` last reported (docs/budgets.md)."""
    budgets = await budgets_for_root(tx, thread_id, schedule_id)
    if any(b.limits.window_percent is not None for b in budgets):
        windows = await windows_of(tx, budgets[0].owner_uid)
        now = datetime.fromisoformat(at).timestamp()
        budgets = [with_window(b, windows, runtime, now) for b in budgets]
    _refuse_if_hard(budgets, thread_id)


async def check_budgets(store: Store, thread_id: str, schedule_id: str | None) -> None:
    """The same refusal before a push or a fire is stored (it would never run)."""
    found = await budget_rows(store, "thread", [thread_id])
    if schedule_id is not None:
        found += await budget_rows(store, "schedule", [schedule_id])
    _refuse_if_hard(found, thread_id)


def _refuse_if_hard(budgets: list[StoredBudget], thread_id: str) -> None:
    for budget in budgets:
        if level(budget.limits, budget.spend) != "hard":
            continue
        what = describe(budget.scope, budget.limits, budget.spend)
        how = (
            f"`alp thread budget {thread_id} --usd N` raises it (or --clear)"
            if budget.scope == "thread"
            else f"`alp schedule rm {budget.target_id}` and a new one with a larger --total-usd"
        )
        window = budget.limits.window_percent
        if window is not None and (budget.spend.window_percent or 0.0) >= window:
            how = (
                "the subscription window is that full: it runs again once the window resets, or "
                f"`alp thread budget {thread_id} --window-percent N` raises the share"
            )
        raise BudgetExceeded(
            f"{what}: no new root runs until it is raised; {how}",
            scope=budget.scope,
            targetId=budget.target_id,
            usd=budget.limits.usd,
            tokens=budget.limits.tokens,
            spentUsd=round(budget.spend.cost_usd, 6),
            spentTokens=budget.spend.tokens,
            windowPercent=window,
            windowUsedPercent=budget.spend.window_percent,
        )
