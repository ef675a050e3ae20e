"""Execution rows to wire types, and the queries several services share."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Any

import aiosqlite
import msgspec

from alpd.domain.runs.policy import (
    Policy,
    policy_document,
    policy_hash,
    verify_policy,
    verify_policy_document,
)
from alpd.errors import (
    ExecutionNotFound,
    ExecutionPolicyTampered,
    PermissionDenied,
    ThreadExecutionBindingMismatch,
)
from alpd.runtimes.base import LaunchSpec
from alpd.services.context import Caller
from alpd.store.db import Store
from protocol.messages import Execution, Origin, Usage

EXECUTION_COLUMNS = """
    id, owner_uid, thread_id, is_root, root_id, parent_id, sequence, runtime, agent, kind,
    origin, headless, status, outcome, exit_code, summary, policy, policy_hash,
    context_revision, context_digest, cwd, exec_dir, launcher_pid, pid, pid_start_time,
    boot_id, native_session_id, transcript_path, usage, cost_usd, output_tail, history_level,
    history_skipped, created_at, started_at, settled_at
"""

_origin = msgspec.json.Decoder(Origin)
_usage = msgspec.json.Decoder(Usage)


def _duration(started: str | None, settled: str | None) -> float | None:
    if not started or not settled:
        return None
    begin = datetime.fromisoformat(started.replace("Z", "+00:00"))
    end = datetime.fromisoformat(settled.replace("Z", "+00:00"))
    return round((end - begin).total_seconds(), 3)


def verified_policy(row: sqlite3.Row) -> Policy:
    """The execution's policy, re-hashed, and the row's copies of it checked against it.

    EXECUTION_POLICY_TAMPERED when the document no longer hashes to `policy_hash` or a
    column copied from it (agent, runtime, kind, headless) says otherwise;
    THREAD_EXECUTION_BINDING_MISMATCH when the binding columns are not the policy's binding.
    Called before every decision taken on a policy (delegation, spawning, `execution/show`,
    building on a thread's roots)."""
    try:
        policy = verify_policy(bytes(row["policy"]), row["policy_hash"])
    except ExecutionPolicyTampered as exc:
        exc.data.setdefault("executionId", row["id"])
        raise
    copied = (row["agent"], row["runtime"], row["kind"], bool(row["headless"]))
    if copied != (policy.agent, policy.runtime, policy.kind, policy.headless):
        raise ExecutionPolicyTampered(
            f"execution {row['id']}'s row no longer agrees with its policy",
            executionId=row["id"],
        )
    binding = policy.binding
    columns = (row["context_revision"], row["context_digest"])
    expected = (
        (None, None) if binding is None else (binding.context_revision, binding.context_digest)
    )
    if columns != expected or (binding is not None and binding.id != row["thread_id"]):
        raise ThreadExecutionBindingMismatch(
            f"execution {row['id']}'s binding columns are not the binding inside its policyHash",
            executionId=row["id"],
            threadId=row["thread_id"],
        )
    return policy


def shown_policy(row: sqlite3.Row) -> dict[str, Any]:
    """The policy document `execution/show` returns, re-hashed first. An imported session's
    minimal `{"legacy": true, …}` document is checked against its hash and shown as is."""
    document = bytes(row["policy"])
    if row["thread_id"] is None and _origin.decode(row["origin"]).door == "import":
        try:
            verify_policy_document(document, row["policy_hash"])
        except ExecutionPolicyTampered as exc:
            exc.data.setdefault("executionId", row["id"])
            raise
        shown: dict[str, Any] = msgspec.json.decode(document)
        return shown
    return msgspec.to_builtins(verified_policy(row))  # type: ignore[no-any-return]


def execution_from_row(row: sqlite3.Row, *, with_policy: bool = False) -> Execution:
    policy: dict[str, Any] | None = None
    if with_policy:
        policy = shown_policy(row)
    return Execution(
        id=row["id"],
        root_id=row["root_id"],
        runtime=row["runtime"],
        agent=row["agent"],
        kind=row["kind"],
        origin=_origin.decode(row["origin"]),
        headless=bool(row["headless"]),
        status=row["status"],
        policy_hash=row["policy_hash"],
        cwd=row["cwd"],
        created_at=row["created_at"],
        thread_id=row["thread_id"],
        parent_id=row["parent_id"],
        sequence=row["sequence"],
        outcome=row["outcome"],
        exit_code=row["exit_code"],
        summary=row["summary"],
        context_revision=row["context_revision"],
        context_digest=row["context_digest"],
        pid=row["pid"],
        started_at=row["started_at"],
        settled_at=row["settled_at"],
        duration_seconds=_duration(row["started_at"] or row["created_at"], row["settled_at"]),
        usage=_usage.decode(row["usage"]) if row["usage"] else None,
        cost_usd=row["cost_usd"],
        output_tail=row["output_tail"],
        history_level=row["history_level"],
        history_skipped=row["history_skipped"] if row["history_level"] == "partial" else None,
        native_session_id=row["native_session_id"],
        transcript_path=row["transcript_path"],
        policy=policy,
    )


async def owned_execution(store: Store, caller: Caller, execution_id: str) -> sqlite3.Row:
    """An execution's row, read outside a write unit: EXECUTION_NOT_FOUND, or
    PERMISSION_DENIED when it belongs to another user."""
    row = await store.fetchone("SELECT * FROM executions WHERE id = ?", (execution_id,))
    if row is None:
        raise ExecutionNotFound(f"no execution {execution_id!r}", executionId=execution_id)
    check_execution_owner(row, caller)
    return row


def check_execution_owner(row: sqlite3.Row, caller: Caller) -> None:
    if row["owner_uid"] != caller.uid:
        raise PermissionDenied("the execution belongs to another user", executionId=row["id"])


async def load_execution_row(conn: aiosqlite.Connection, execution_id: str) -> sqlite3.Row:
    async with conn.execute(
        f"SELECT {EXECUTION_COLUMNS} FROM executions WHERE id = ?", (execution_id,)
    ) as cur:
        row = await cur.fetchone()
    if row is None:
        raise ExecutionNotFound(f"no execution {execution_id!r}", executionId=execution_id)
    return row


async def insert_execution(
    conn: aiosqlite.Connection,
    *,
    execution_id: str,
    owner_uid: int,
    policy: Policy,
    spec: LaunchSpec,
    exec_dir: str,
    launcher_pid: int,
    at: str,
    thread_id: str | None,
    root_id: str,
    parent_id: str | None = None,
    sequence: int | None = None,
    is_root: bool | None = None,
) -> None:
    """A new execution, `reserved`, with its immutable policy; a root when it has no parent
    (unless `is_root` says otherwise: a `temp` run belongs to a thread without being a root).

    Kind, headless and the thread binding are read from the policy, so the row can never
    disagree with the document its hash covers."""
    binding = policy.binding
    await conn.execute(
        "INSERT INTO executions (id, owner_uid, thread_id, is_root, root_id, parent_id, "
        "sequence, runtime, agent, kind, origin, headless, status, policy, policy_hash, "
        "context_revision, context_digest, cwd, exec_dir, launcher_pid, native_session_id, "
        "transcript_path, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'reserved', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            execution_id,
            owner_uid,
            thread_id,
            int(parent_id is None if is_root is None else is_root),
            root_id,
            parent_id,
            sequence,
            policy.runtime,
            policy.agent,
            policy.kind,
            msgspec.json.encode(policy.origin).decode(),
            int(policy.headless),
            policy_document(policy),
            policy_hash(policy),
            binding.context_revision if binding else None,
            binding.context_digest if binding else None,
            spec.cwd,
            exec_dir,
            launcher_pid,
            spec.native_session_id,
            spec.transcript_path,
            at,
        ),
    )
