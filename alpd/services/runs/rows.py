"""Execution records to wire types, and the reads several services share."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec

from alpd.domain.runs.policy import Policy, verify_policy, verify_policy_document
from alpd.errors import (
    ExecutionNotFound,
    ExecutionPolicyTampered,
    PermissionDenied,
    ThreadExecutionBindingMismatch,
)
from alpd.services.context import Caller
from alpd.store.db import Store, Tx
from alpd.store.runs import ExecutionRecord, execution_by_id, execution_in
from protocol.messages import Execution, Origin, Usage

_origin = msgspec.json.Decoder(Origin)
_usage = msgspec.json.Decoder(Usage)


def _duration(started: str | None, settled: str | None) -> float | None:
    if not started or not settled:
        return None
    begin = datetime.fromisoformat(started.replace("Z", "+00:00"))
    end = datetime.fromisoformat(settled.replace("Z", "+00:00"))
    return round((end - begin).total_seconds(), 3)


def verified_policy(record: ExecutionRecord) -> Policy:
    """The execution's policy, re-hashed, and the row's copies of it checked against it.

    EXECUTION_POLICY_TAMPERED when the document no longer hashes to `policy_hash` or a
    column copied from it (agent, runtime, kind, headless) says otherwise;
    THREAD_EXECUTION_BINDING_MISMATCH when the binding columns are not the policy's binding.
    Called before every decision taken on a policy (delegation, spawning, `execution/show`,
    building on a thread's roots)."""
    try:
        policy = verify_policy(record.policy, record.policy_hash)
    except ExecutionPolicyTampered as exc:
        exc.data.setdefault("executionId", record.id)
        raise
    copied = (record.agent, record.runtime, record.kind, record.headless)
    if copied != (policy.agent, policy.runtime, policy.kind, policy.headless):
        raise ExecutionPolicyTampered(
            f"execution {record.id}'s row no longer agrees with its policy",
            executionId=record.id,
        )
    binding = policy.binding
    columns = (record.context_revision, record.context_digest)
    expected = (
        (None, None) if binding is None else (binding.context_revision, binding.context_digest)
    )
    if columns != expected or (binding is not None and binding.id != record.thread_id):
        raise ThreadExecutionBindingMismatch(
            f"execution {record.id}'s binding columns are not the binding inside its policyHash",
            executionId=record.id,
            threadId=record.thread_id,
        )
    return policy


def shown_policy(record: ExecutionRecord) -> dict[str, Any]:
    """The policy document `execution/show` returns, re-hashed first. An imported session's
    minimal `{"legacy": true, …}` document is checked against its hash and shown as is."""
    document = record.policy
    if record.thread_id is None and _origin.decode(record.origin).door == "import":
        try:
            verify_policy_document(document, record.policy_hash)
        except ExecutionPolicyTampered as exc:
            exc.data.setdefault("executionId", record.id)
            raise
        shown: dict[str, Any] = msgspec.json.decode(document)
        return shown
    return msgspec.to_builtins(verified_policy(record))  # type: ignore[no-any-return]


def execution_from_record(record: ExecutionRecord, *, with_policy: bool = False) -> Execution:
    policy: dict[str, Any] | None = None
    if with_policy:
        policy = shown_policy(record)
    return Execution(
        id=record.id,
        root_id=record.root_id,
        runtime=record.runtime,
        agent=record.agent,
        kind=record.kind,
        origin=_origin.decode(record.origin),
        headless=record.headless,
        status=record.status,
        policy_hash=record.policy_hash,
        cwd=record.cwd,
        created_at=record.created_at,
        thread_id=record.thread_id,
        parent_id=record.parent_id,
        sequence=record.sequence,
        outcome=record.outcome,
        exit_code=record.exit_code,
        summary=record.summary,
        context_revision=record.context_revision,
        context_digest=record.context_digest,
        pid=record.pid,
        started_at=record.started_at,
        settled_at=record.settled_at,
        duration_seconds=_duration(record.started_at or record.created_at, record.settled_at),
        usage=_usage.decode(record.usage) if record.usage else None,
        cost_usd=record.cost_usd,
        output_tail=record.output_tail,
        history_level=record.history_level,
        history_skipped=record.history_skipped if record.history_level == "partial" else None,
        native_session_id=record.native_session_id,
        transcript_path=record.transcript_path,
        host_id=record.host_id,
        host_name=record.host_name,
        settled_by=record.settled_by,
        policy=policy,
    )


async def owned_execution(store: Store, caller: Caller, execution_id: str) -> ExecutionRecord:
    """An execution, read outside a write unit: EXECUTION_NOT_FOUND, or PERMISSION_DENIED
    when it belongs to another user."""
    record = await execution_by_id(store, execution_id)
    if record is None:
        raise ExecutionNotFound(f"no execution {execution_id!r}", executionId=execution_id)
    check_execution_owner(record, caller)
    return record


def check_execution_owner(record: ExecutionRecord, caller: Caller) -> None:
    if record.owner_uid != caller.uid:
        raise PermissionDenied("the execution belongs to another user", executionId=record.id)


async def load_execution(tx: Tx, execution_id: str) -> ExecutionRecord:
    """An execution, read inside a unit: EXECUTION_NOT_FOUND when there is none."""
    record = await execution_in(tx, execution_id)
    if record is None:
        raise ExecutionNotFound(f"no execution {execution_id!r}", executionId=execution_id)
    return record
