"""Roots the daemon opens by itself: a push, a scheduled fire, a delivered round.

The kind and the origin come from the code path that calls `open_background_root`, never
from a client (`thread/continue` accepts only `interactive`: `refuse_claimed_kind`). The run
belongs to the thread's owner and runs headless under alpd.

Where it runs: in the thread's workspace, written once when its owner created the thread —
never where the last root ran: a root a person ran elsewhere (`--cwd`) moves no later run
(`alpd/services/runs/defaults.py`). Which agent: the one asked for, else the last root's agent,
else the default agent (`agent_for_thread`) — except for a person's push, which names one
where no root ran yet (`require_thread_agent`). The agent's own definition still decides what
the run may do; nothing here widens it. Its limits: a scheduled fire's are its schedule's
(`alp schedule add --timeout --budget-usd`), else the agent's.
"""

from __future__ import annotations

import os

from alpd.domain.runs.policy import Origin, SessionKind
from alpd.errors import InvalidArgument, KindNotAllowed, ThreadClosed, ThreadNotFound
from alpd.services.context import Caller
from alpd.services.runs.executions import DEFAULT_AGENT, Executions
from alpd.services.runs.reserve import InUnit, Prepared, check_budgets
from alpd.services.threads.lifecycle import check_owner
from alpd.store.conversation.delivery import (
    ThreadState,
    last_root_agent,
    thread_state,
    thread_workspace,
)
from alpd.store.schedules import schedule_limits
from protocol import messages as m

#: kinds a client may ask for on `thread/continue`; every other one is the daemon's to start
CLIENT_KINDS = frozenset({"interactive"})


def refuse_claimed_kind(params: m.ContinueParams) -> None:
    """KIND_NOT_ALLOWED for a client that claims a daemon-only kind or writes an origin."""
    if params.kind not in CLIENT_KINDS:
        raise KindNotAllowed(
            f"a client cannot start a {params.kind!r} session: alp starts those itself "
            "(`alp push` wakes a thread, schedules fire, delegation makes sub-agents); "
            "drop --kind",
            kind=params.kind,
        )
    if params.origin is not None:
        raise KindNotAllowed(
            "a client cannot write an execution's origin: alp records it from how the run "
            "was started; drop `origin`",
            field="origin",
        )


def owner_caller(owner_uid: int) -> Caller:
    """The thread's owner, standing for a run nobody's client is waiting on."""
    return Caller(uid=owner_uid, gid=os.getgid(), pid=os.getpid())


async def agent_for_thread(ex: Executions, thread_id: str, agent: str | None) -> str:
    """`agent` if given, else the agent of the thread's last root, else the default agent."""
    if agent is not None:
        return agent
    last = await last_root_agent(ex.d.store, thread_id)
    return last if last is not None else DEFAULT_AGENT


async def _open_thread(ex: Executions, thread_id: str, requested_by: Caller | None) -> ThreadState:
    """The thread, if it exists, is `requested_by`'s (when given) and open; else the error."""
    thread = await thread_state(ex.d.store, thread_id)
    if thread is None:
        raise ThreadNotFound(
            f"no thread {thread_id!r}; `alp thread list --all` shows yours", threadId=thread_id
        )
    if requested_by is not None:
        check_owner(thread, requested_by)
    if thread.status != "open":
        raise ThreadClosed(
            f"thread {thread_id} is {thread.status}; nothing can run in it any more",
            threadId=thread_id,
        )
    return thread


async def require_thread_agent(ex: Executions, thread_id: str, requested_by: Caller) -> None:
    """INVALID_ARGUMENT naming `--agent` when a push names no agent and the thread has none
    to give (no root ran in it yet): alp will not pick one for a person's first run there
    (it was the default agent, a paid Claude run nobody chose). The thread's own errors
    (not found, not the caller's, closed) come first."""
    await _open_thread(ex, thread_id, requested_by)
    if await last_root_agent(ex.d.store, thread_id) is not None:
        return
    known = sorted(ex.agents.agents)
    raise InvalidArgument(
        f"thread {thread_id} has no agent yet (no root has run in it): name the one to run, "
        f"`alp push THREAD --from LABEL --agent NAME -- TEXT` (agents: {', '.join(known)}), or "
        "start the thread once with `alp thread continue`",
        field="agent",
        threadId=thread_id,
        knownAgents=known,
    )


async def _run_directory(ex: Executions, thread_id: str) -> str:
    workspace = await thread_workspace(ex.d.store, thread_id)
    return workspace if workspace is not None else "/"


async def prepare_background_root(
    ex: Executions,
    thread_id: str,
    *,
    kind: SessionKind,
    origin: Origin,
    prompt: str,
    agent: str,
    requested_by: Caller | None = None,
    limits: tuple[int | None, float | None] | None = None,
) -> tuple[Caller, m.ContinueParams, Prepared]:
    """Everything about the root but whether the thread is busy: refuses (THREAD_NOT_FOUND,
    PERMISSION_DENIED for a `requested_by` who is not the owner, THREAD_CLOSED,
    AGENT_NOT_FOUND, RUNTIME_UNAVAILABLE, INVALID_ARGUMENT, BUDGET_EXCEEDED for a thread or
    schedule at its hard budget …) before anything is written.
    `limits` (seconds, USD): the root's own; None: a scheduled origin's schedule's."""
    thread = await _open_thread(ex, thread_id, requested_by)
    caller = owner_caller(thread.owner_uid)
    await check_budgets(ex.d.store, thread_id, origin.schedule_id)
    if limits is None and origin.schedule_id is not None:
        limits = await schedule_limits(ex.d.store, origin.schedule_id)
    timeout_seconds, budget_usd = limits or (None, None)
    params = m.ContinueParams(
        thread_id=thread_id,
        agent=agent,
        kind=kind,
        headless=True,
        prompt=prompt,
        cwd=await _run_directory(ex, thread_id),
        door=origin.door,
        timeout_seconds=timeout_seconds,
        budget_usd=budget_usd,
    )
    return caller, params, ex.prepare(caller, params, origin)


async def open_background_root(
    ex: Executions,
    thread_id: str,
    *,
    kind: SessionKind,
    origin: Origin,
    prompt: str,
    agent: str | None = None,
    addendum: str | None = None,
    in_unit: InUnit | None = None,
) -> m.ContinueResult:
    """Open and start a headless root of `kind` on the thread, now.

    THREAD_BUSY when a root is running (queue instead: `DeliveryService.submit`),
    THREAD_CLOSED, THREAD_NOT_FOUND, or what `prepare_background_root` refuses. `addendum`
    is appended to the root's session context; `in_unit` commits with the root."""
    chosen = await agent_for_thread(ex, thread_id, agent)
    caller, params, prepared = await prepare_background_root(
        ex, thread_id, kind=kind, origin=origin, prompt=prompt, agent=chosen
    )
    return await ex.continue_thread(
        caller, params, prepared=prepared, addendum=addendum, in_unit=in_unit
    )


__all__ = [
    "CLIENT_KINDS",
    "agent_for_thread",
    "open_background_root",
    "owner_caller",
    "prepare_background_root",
    "refuse_claimed_kind",
    "require_thread_agent",
]
