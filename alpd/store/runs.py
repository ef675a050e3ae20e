"""SQL over `executions` for the runs capability: reserve, run, settle, reconcile, the graph,
the caller's execution.

`ExecutionRecord` is one execution's row as the store hands it out (no database row leaves
the store); `execution_record` makes one from a row selected with every column, for the
other capabilities' store modules that read executions too. Turning a record into a wire
type, and checking its policy, is the services' (`alpd.services.runs.rows`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import NamedTuple

import msgspec

from alpd.domain.runs.policy import Policy, policy_document, policy_hash
from alpd.store.db import Store, Tx
from protocol.messages import ExecutionStatus, HistoryLevel, Kind, Outcome

__all__ = [
    "EXECUTION_COLUMNS",
    "ConstraintRefused",
    "ExecutionHead",
    "ExecutionRecord",
    "execution_by_id",
    "execution_head",
    "execution_in",
    "execution_record",
    "graph_executions",
    "insert_execution",
    "next_sequence",
    "record_running",
    "record_settled",
    "running_headless",
    "settled_with_pids",
    "thread_run_defaults",
    "unsettled_executions",
    "with_live_process",
]

EXECUTION_COLUMNS = """
    id, owner_uid, thread_id, is_root, root_id, parent_id, sequence, runtime, agent, kind,
    origin, headless, status, outcome, exit_code, summary, policy, policy_hash,
    context_revision, context_digest, cwd, exec_dir, launcher_pid, pid, pid_start_time,
    boot_id, native_session_id, transcript_path, usage, cost_usd, output_tail, history_level,
    history_skipped, created_at, started_at, settled_at, host_id, host_name, settled_by
"""


#: what an insert a constraint refuses raises (`one_unsettled_root`: a second unsettled root)
ConstraintRefused = sqlite3.IntegrityError


class ExecutionRecord(msgspec.Struct, frozen=True):
    """One row of `executions`, every column; `origin` and `usage` are the stored JSON text
    (decoded where a wire type is made of them), `policy` the canonical document's bytes."""

    id: str
    owner_uid: int
    thread_id: str | None
    is_root: bool
    root_id: str
    parent_id: str | None
    sequence: int | None
    runtime: str
    agent: str
    kind: Kind
    origin: str
    headless: bool
    status: ExecutionStatus
    outcome: Outcome | None
    exit_code: int | None
    summary: str | None
    policy: bytes
    policy_hash: str
    context_revision: int | None
    context_digest: str | None
    cwd: str
    exec_dir: str
    launcher_pid: int | None
    pid: int | None
    pid_start_time: float | None
    boot_id: str | None
    native_session_id: str | None
    transcript_path: str | None
    usage: str | None
    cost_usd: float | None
    output_tail: str | None
    history_level: HistoryLevel | None
    history_skipped: int
    created_at: str
    started_at: str | None
    settled_at: str | None
    #: the host that runs it (None: from before hosts), its name then, and the host that
    #: settled it (another one's: it took the run's host over; docs/many-machines.md)
    host_id: str | None = None
    host_name: str | None = None
    settled_by: str | None = None


def execution_record(row: sqlite3.Row) -> ExecutionRecord:
    """The record of a row selected with every column (`SELECT *` or `EXECUTION_COLUMNS`)."""
    return ExecutionRecord(
        id=row["id"],
        owner_uid=row["owner_uid"],
        thread_id=row["thread_id"],
        is_root=bool(row["is_root"]),
        root_id=row["root_id"],
        parent_id=row["parent_id"],
        sequence=row["sequence"],
        runtime=row["runtime"],
        agent=row["agent"],
        kind=row["kind"],
        origin=row["origin"],
        headless=bool(row["headless"]),
        status=row["status"],
        outcome=row["outcome"],
        exit_code=row["exit_code"],
        summary=row["summary"],
        policy=bytes(row["policy"]),
        policy_hash=row["policy_hash"],
        context_revision=row["context_revision"],
        context_digest=row["context_digest"],
        cwd=row["cwd"],
        exec_dir=row["exec_dir"],
        launcher_pid=row["launcher_pid"],
        pid=row["pid"],
        pid_start_time=row["pid_start_time"],
        boot_id=row["boot_id"],
        native_session_id=row["native_session_id"],
        transcript_path=row["transcript_path"],
        usage=row["usage"],
        cost_usd=row["cost_usd"],
        output_tail=row["output_tail"],
        history_level=row["history_level"],
        history_skipped=row["history_skipped"],
        created_at=row["created_at"],
        started_at=row["started_at"],
        settled_at=row["settled_at"],
        host_id=row["host_id"],
        host_name=row["host_name"],
        settled_by=row["settled_by"],
    )


# reads outside a unit


async def execution_by_id(store: Store, execution_id: str) -> ExecutionRecord | None:
    row = await store.fetchone("SELECT * FROM executions WHERE id = ?", (execution_id,))
    return None if row is None else execution_record(row)


class ExecutionHead(NamedTuple):
    """What `execution/settle` needs to know before its unit: which lease, and whether the
    run's transcript is still to be found."""

    thread_id: str | None
    is_root: bool
    native_session_id: str | None


async def execution_head(store: Store, execution_id: str) -> ExecutionHead | None:
    row = await store.fetchone(
        "SELECT thread_id, is_root, native_session_id FROM executions WHERE id = ?",
        (execution_id,),
    )
    if row is None:
        return None
    return ExecutionHead(row["thread_id"], bool(row["is_root"]), row["native_session_id"])


async def unsettled_executions(store: Store, thread_id: str | None) -> list[ExecutionRecord]:
    """Every execution not settled yet: of one thread, or of all when `thread_id` is None."""
    sql = "SELECT * FROM executions WHERE status != 'settled'"
    args: tuple[str, ...] = ()
    if thread_id is not None:
        sql += " AND thread_id = ?"
        args = (thread_id,)
    return [execution_record(row) for row in await store.fetchall(sql, args)]


async def graph_executions(store: Store, root_id: str) -> list[ExecutionRecord]:
    """The root and every execution of its graph, in the order they were created."""
    rows = await store.fetchall(
        "SELECT * FROM executions WHERE root_id = ? ORDER BY created_at, id", (root_id,)
    )
    return [execution_record(row) for row in rows]


async def with_live_process(store: Store, owner_uid: int) -> list[ExecutionRecord]:
    """The user's executions that may have a process of theirs: running with a pid, or an
    interactive one reserved with its launching client's pid."""
    rows = await store.fetchall(
        "SELECT * FROM executions WHERE owner_uid = ? AND ("
        "(status = 'running' AND pid IS NOT NULL) OR "
        "(status = 'reserved' AND headless = 0 AND launcher_pid IS NOT NULL))",
        (owner_uid,),
    )
    return [execution_record(row) for row in rows]


async def settled_with_pids(
    store: Store, owner_uid: int, pids: Sequence[int]
) -> list[ExecutionRecord]:
    """The user's settled executions whose recorded pid is one of `pids` (not empty), in the
    order they settled."""
    marks = ", ".join("?" * len(pids))
    rows = await store.fetchall(
        f"SELECT * FROM executions WHERE owner_uid = ? AND status = 'settled' "
        f"AND pid IN ({marks}) ORDER BY settled_at",
        (owner_uid, *pids),
    )
    return [execution_record(row) for row in rows]


async def settled_among(
    store: Store, owner_uid: int, execution_ids: Sequence[str]
) -> list[ExecutionRecord]:
    """The user's settled executions among `execution_ids` (not empty)."""
    marks = ", ".join("?" * len(execution_ids))
    rows = await store.fetchall(
        f"SELECT * FROM executions WHERE owner_uid = ? AND status = 'settled' AND id IN ({marks})",
        (owner_uid, *execution_ids),
    )
    return [execution_record(row) for row in rows]


# inside a unit


async def unsettled_below(tx: Tx, root_id: str) -> list[str]:
    """The unsettled executions of `root_id`'s graph other than the root, oldest first."""
    async with tx.execute(
        "SELECT id FROM executions WHERE root_id = ? AND id != ? AND status != 'settled' "
        "ORDER BY created_at, id",
        (root_id, root_id),
    ) as cur:
        return [str(row["id"]) for row in await cur.fetchall()]


async def execution_in(tx: Tx, execution_id: str) -> ExecutionRecord | None:
    async with tx.execute(
        f"SELECT {EXECUTION_COLUMNS} FROM executions WHERE id = ?", (execution_id,)
    ) as cur:
        row = await cur.fetchone()
    return None if row is None else execution_record(row)


async def next_sequence(tx: Tx, thread_id: str) -> int:
    """The sequence number the thread's next root takes."""
    async with tx.execute(
        "SELECT coalesce(max(sequence), 0) + 1 FROM executions WHERE thread_id = ?",
        (thread_id,),
    ) as cur:
        return int((await cur.fetchone())[0])  # type: ignore[index]


async def insert_execution(
    tx: Tx,
    *,
    execution_id: str,
    owner_uid: int,
    policy: Policy,
    cwd: str,
    exec_dir: str,
    launcher_pid: int,
    at: str,
    thread_id: str | None,
    root_id: str,
    parent_id: str | None = None,
    sequence: int | None = None,
    is_root: bool | None = None,
    native_session_id: str | None = None,
    transcript_path: str | None = None,
    host: tuple[str, str] | None = None,
) -> None:
    """A new execution, `reserved`, with its immutable policy; a root when it has no parent
    (unless `is_root` says otherwise: a `temp` run belongs to a thread without being a root).

    Kind, headless and the thread binding are read from the policy, so the row can never
    disagree with the document its hash covers."""
    binding = policy.binding
    await tx.execute(
        "INSERT INTO executions (id, owner_uid, thread_id, is_root, root_id, parent_id, "
        "sequence, runtime, agent, kind, origin, headless, status, policy, policy_hash, "
        "context_revision, context_digest, cwd, exec_dir, launcher_pid, native_session_id, "
        "transcript_path, created_at, host_id, host_name) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'reserved', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
        "?, ?)",
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
            cwd,
            exec_dir,
            launcher_pid,
            native_session_id,
            transcript_path,
            at,
            host[0] if host else None,
            host[1] if host else None,
        ),
    )


async def record_running(
    tx: Tx, execution_id: str, *, pid: int, start_time: float, boot_id: str, at: str
) -> None:
    """The run's process (pid, start time, boot id), unless it has settled already."""
    await tx.execute(
        "UPDATE executions SET status = 'running', pid = ?, pid_start_time = ?, "
        "boot_id = ?, started_at = coalesce(started_at, ?) "
        "WHERE id = ? AND status != 'settled'",
        (pid, start_time, boot_id, at, execution_id),
    )


async def record_settled(
    tx: Tx,
    execution_id: str,
    *,
    outcome: Outcome,
    exit_code: int | None,
    summary: str | None,
    output_tail: str | None,
    at: str,
    settled_by: str | None = None,
) -> None:
    """The run's end: its outcome, exit code, summary and (when given) output tail, and
    the host that settled it."""
    await tx.execute(
        "UPDATE executions SET status = 'settled', outcome = ?, exit_code = ?, "
        "summary = ?, output_tail = coalesce(?, output_tail), settled_at = ?, "
        "settled_by = ? WHERE id = ?",
        (outcome, exit_code, summary, output_tail, at, settled_by, execution_id),
    )


async def thread_run_defaults(store: Store, thread_id: str) -> tuple[str, str | None] | None:
    """The thread's workspace and the agent of its last root (None: no root yet); None for
    no such thread."""
    row = await store.fetchone(
        "SELECT t.workspace, (SELECT e.agent FROM executions e WHERE e.thread_id = t.id "
        "AND e.is_root = 1 ORDER BY e.sequence DESC LIMIT 1) AS agent "
        "FROM threads t WHERE t.id = ?",
        (thread_id,),
    )
    if row is None:
        return None
    return str(row["workspace"]), row["agent"]


async def running_headless(store: Store, host_id: str | None = None) -> list[ExecutionRecord]:
    """Every running execution alpd supervises (headless roots and delegated children); with
    `host_id`, those of that host (and of none: from before hosts)."""
    sql = f"SELECT {EXECUTION_COLUMNS} FROM executions WHERE status = 'running' AND headless = 1"
    if host_id is None:
        rows = await store.fetchall(sql)
    else:
        rows = await store.fetchall(sql + " AND (host_id IS NULL OR host_id = ?)", (host_id,))
    return [execution_record(row) for row in rows]
