"""`thread/adopt`: an imported native session (a legacy-unthreaded execution that
`history/import` made) becomes a settled root of a thread, so the work from before alp can
be read (`thread/transcript`) and continued (`thread/continue`).

The session is named by its native id or its legacy execution's id. Refused, in order:
no such imported session of the caller's (EXECUTION_NOT_FOUND, PERMISSION_DENIED); an
execution that is not an import (INVALID_ARGUMENT: a root alp started is in its thread
already); then, in one store unit under the thread's lease (a new thread is created in that
same unit when none is named):

1. the thread is the caller's and open (THREAD_CLOSED), its revision moves by one, guarded
   by `ifRevision` (THREAD_REVISION_CONFLICT), no root of it is unsettled (THREAD_BUSY);
2. a root already reads this session (SESSION_ALREADY_ADOPTED, naming it): adopting is
   once per session — a second root reading the same entries would show them twice;
3. the chain is verified from genesis (as continue does) and the new root's policy is bound
   to the head snapshot: kind `interactive`, the session's runtime and that runtime's
   agent, origin `{door, by, adoptedFrom}`;
4. the root is inserted settled (`completed`, its summary naming the session) and its
   seed checkpoint projected into context revision n+1 — what every settling root does, so
   the chain rules (a root's projection follows the revision it opened on) hold, and the
   next `continue` opens on n+1.

What the root carries: its transcript is the session's entries (the transcript reads the
execution named by `adoptedFrom`; nothing is copied), the recap and the last-exchange tail
may read them. The pinned context gets nothing from the session's text: only the outcome
line of the adoption. A person pins what should carry on.
"""

from __future__ import annotations

import msgspec

from alpd.domain.ids import EXECUTION_PREFIX, THREAD_PREFIX
from alpd.domain.runs.policy import Origin, PolicyRequest, ThreadBinding, build_policy
from alpd.domain.secrets.filter import redact
from alpd.domain.threads.context import Outcome as DomainOutcome
from alpd.domain.threads.context import seed_checkpoint
from alpd.domain.threads.projector import project_context
from alpd.errors import (
    ExecutionNotFound,
    InvalidArgument,
    PermissionDenied,
    SessionAlreadyAdopted,
    ThreadClosed,
)
from alpd.services.context import Caller
from alpd.services.runs.executions import Executions
from alpd.services.threads.lifecycle import check_owner, refuse_if_busy
from alpd.services.threads.snapshots import load_chain
from alpd.store.db import Tx
from alpd.store.history.imports import entry_count
from alpd.store.runs import ExecutionRecord, insert_execution, next_sequence, record_settled
from alpd.store.threads.adoptions import (
    adoption_of,
    first_prompt,
    sessions_named,
    set_history_level,
)
from alpd.store.threads.shell import bump_revision, insert_thread, load_thread
from alpd.store.threads.snapshots import (
    insert_compaction,
    insert_genesis,
    insert_snapshot,
    save_checkpoint,
)
from alpd.workspace import workspace_of
from protocol import messages as m

__all__ = ["adopt"]

#: characters of the first prompt a new thread is titled with
TITLE_CHARS = 80


async def adopt(
    ex: Executions, caller: Caller, params: m.ThreadAdoptParams, door: str
) -> m.ThreadAdoptResult:
    """Adopt the session (module docstring); `door` is the connection's."""
    legacy = await _imported_session(ex, caller, params.session_id)
    session = legacy.native_session_id or legacy.id
    agent = ex.resolve_agent(None, legacy.runtime)
    entries = await entry_count(ex.d.store, legacy.id)
    title = params.title
    if params.thread_id is None and title is None:
        prompt = await first_prompt(ex.d.store, legacy.id)
        title = _title(prompt) if prompt else f"{legacy.runtime} session {session[:8]}"
    title = redact(title).text if title else title
    thread_id = params.thread_id or ex.d.clock.new_id(THREAD_PREFIX)
    created = params.thread_id is None
    if not created:
        await ex.threads.get(caller, thread_id)
        await ex.reconcile_thread(caller, thread_id)
    execution_id = ex.d.clock.new_id(EXECUTION_PREFIX)
    at = ex.d.clock.now_iso()
    origin = Origin(door=door, by=f"uid:{caller.uid}", adopted_from=legacy.id)
    summary = (
        f"adopted {legacy.runtime} session {session} ({entries} entries, imported as {legacy.id})"
    )

    async def unit(tx: Tx) -> m.ThreadAdoptResult:
        if created:
            workspace = workspace_of(legacy.cwd or "/")
            await insert_thread(
                tx, thread_id, owner_uid=caller.uid, title=title, workspace=workspace, at=at
            )
            await insert_genesis(tx, thread_id, at)
        thread = await load_thread(tx, thread_id)
        check_owner(thread, caller)
        if thread.status != "open":
            raise ThreadClosed(
                f"thread {thread_id} is {thread.status}; adopt into an open thread, or into a "
                "new one (leave out --thread)",
                threadId=thread_id,
            )
        revision = await bump_revision(
            tx,
            thread_id,
            "adopted",
            at,
            if_revision=params.if_revision,
            detail=execution_id,
            sets={"context_revision": thread.context_revision + 1},
        )
        await refuse_if_busy(tx, thread_id)
        taken = await adoption_of(tx, legacy.id)
        if taken is not None:
            raise SessionAlreadyAdopted(
                f"session {session} is root #{taken.sequence} of thread {taken.thread_id} "
                f"already: read it with `alp thread log {taken.thread_id}`, go on with "
                f"`alp thread continue {taken.thread_id}`",
                executionId=taken.execution_id,
                threadId=taken.thread_id,
                sequence=taken.sequence,
                adoptedFrom=legacy.id,
            )
        head, digest = await load_chain(tx, thread_id, thread.context_revision)
        binding = ThreadBinding(id=thread_id, context_revision=head.revision, context_digest=digest)
        request = PolicyRequest(
            agent=agent.name,
            kind="interactive",
            headless=False,
            workspace=thread.workspace,
            origin=origin,
            runtime=agent.runtime,
            cwd=legacy.cwd or None,
        )
        policy = build_policy(agent, request, binding)
        sequence = await next_sequence(tx, thread_id)
        await insert_execution(
            tx,
            execution_id=execution_id,
            owner_uid=caller.uid,
            policy=policy,
            cwd=legacy.cwd,
            exec_dir="",
            launcher_pid=caller.pid,
            at=at,
            thread_id=thread_id,
            root_id=execution_id,
            sequence=sequence,
        )
        await record_settled(
            tx,
            execution_id,
            outcome="completed",
            exit_code=None,
            summary=summary,
            output_tail=None,
            at=at,
        )
        await set_history_level(tx, execution_id, legacy.history_level)
        checkpoint = seed_checkpoint(execution_id, head)
        await save_checkpoint(tx, checkpoint, at)
        outcome = DomainOutcome(
            execution_id=execution_id, status="completed", summary=summary, exit_code=None, at=at
        )
        projection = project_context(head, checkpoint, outcome)
        await insert_snapshot(tx, projection.snapshot, at)
        if projection.compaction is not None:
            await insert_compaction(tx, thread_id, projection.compaction, at)
        return m.ThreadAdoptResult(
            thread_id=thread_id,
            execution_id=execution_id,
            sequence=sequence,
            adopted_from=legacy.id,
            native_session_id=session,
            revision=revision,
            entries=entries,
            created_thread=created,
        )

    async with ex.leases.thread(thread_id):
        result = await ex.d.store.write(unit)
    ex.threads.publish(await ex.threads.get(caller, thread_id), "adopted")
    return result


async def _imported_session(ex: Executions, caller: Caller, name: str) -> ExecutionRecord:
    """The legacy-unthreaded execution `name` means (module docstring)."""
    found = await sessions_named(ex.d.store, name)
    if not found:
        raise ExecutionNotFound(
            f"no imported session {name!r}: `alp import claude` (or codex) indexes the "
            "sessions from before alp; `alp search` finds their ids",
            sessionId=name,
        )
    mine = [record for record in found if record.owner_uid == caller.uid]
    if not mine:
        raise PermissionDenied(f"session {name} belongs to another user", sessionId=name)
    record = mine[0]
    if record.thread_id is not None or not _imported(record):
        where = f"root #{record.sequence} of thread {record.thread_id}"
        raise InvalidArgument(
            f"{name} is not an imported session: it is {where} already "
            f"(`alp thread log {record.thread_id}` reads it)",
            sessionId=name,
            executionId=record.id,
            threadId=record.thread_id,
        )
    return record


def _imported(record: ExecutionRecord) -> bool:
    origin = msgspec.json.decode(record.origin, type=Origin)
    return origin.door == "import" and record.is_root


def _title(prompt: str) -> str:
    flat = " ".join(prompt.split())
    return flat if len(flat) <= TITLE_CHARS else flat[: TITLE_CHARS - 1] + "…"
