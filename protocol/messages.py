"""Wire types: the params and result of every method, as msgspec Structs.

Compatibility rules (msgspec's schema-evolution guide): a new field gets a default; an
existing field never changes type or meaning; names are camelCase on the wire. Optional
fields are omitted when unset, so old clients see nothing new unless they ask.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

PROTOCOL_VERSION = 1

ThreadStatus = Literal["open", "closed", "archived"]
Kind = Literal["interactive", "push", "scheduled", "sub-agent", "temp"]
Outcome = Literal["completed", "failed", "cancelled", "interrupted"]
ExecutionStatus = Literal["reserved", "running", "settled"]
PinKind = Literal["objective", "decision", "constraint", "open-item", "next-action", "resolve"]
HistoryLevel = Literal["complete", "partial", "final-only", "unsupported", "pending"]


class Wire(msgspec.Struct, rename="camel", omit_defaults=True, forbid_unknown_fields=False):
    """Base of every wire type."""


class Empty(Wire):
    pass


# daemon/*


class PingResult(Wire):
    version: str
    protocol: int
    pid: int


class TaskState(Wire):
    name: str
    state: str
    last_run_at: str | None = None
    detail: str | None = None


class Counts(Wire):
    threads: int = 0
    open_threads: int = 0
    executions: int = 0
    running: int = 0
    history_entries: int = 0


class StatusResult(Wire):
    version: str
    protocol: int
    pid: int
    uptime_seconds: float
    home: str
    socket: str
    database: str
    connections: int
    counts: Counts
    tasks: list[TaskState]


# thread/*


class Thread(Wire):
    id: str
    title: str | None
    workspace: str
    status: ThreadStatus
    revision: int
    context_revision: int
    owner_uid: int
    created_at: str
    updated_at: str
    context_digest: str | None = None
    closed_at: str | None = None
    archived_at: str | None = None
    busy_root: str | None = None
    root_count: int = 0


class ThreadCreateParams(Wire):
    title: str | None = None
    workspace: str | None = None
    cwd: str | None = None


class ThreadRef(Wire):
    thread_id: str
    if_revision: int | None = None


class ThreadListParams(Wire):
    workspace: str | None = None
    cwd: str | None = None
    all: bool = False
    status: ThreadStatus | None = None
    limit: int = 200


class ThreadListResult(Wire):
    threads: list[Thread]


# events/*


class SubscribeParams(Wire):
    events: list[str] | None = None
    thread_id: str | None = None


class SubscribeResult(Wire):
    subscribed: list[str]


class ThreadChanged(Wire):
    thread: Thread
    change: str


NOTIFICATIONS: dict[str, type[Wire]] = {
    "thread/changed": ThreadChanged,
}


def to_wire(value: Any) -> Any:
    """Builtins for encoding (msgspec encodes Structs directly; this is for tests/tools)."""
    return msgspec.to_builtins(value)


# executions, context


class Origin(Wire):
    door: str
    by: str
    parent_execution_id: str | None = None
    trigger: str | None = None


class Usage(Wire):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0


class Execution(Wire):
    id: str
    root_id: str
    runtime: str
    agent: str
    kind: Kind
    origin: Origin
    headless: bool
    status: ExecutionStatus
    policy_hash: str
    cwd: str
    created_at: str
    thread_id: str | None = None
    parent_id: str | None = None
    sequence: int | None = None
    outcome: Outcome | None = None
    exit_code: int | None = None
    summary: str | None = None
    context_revision: int | None = None
    context_digest: str | None = None
    pid: int | None = None
    started_at: str | None = None
    settled_at: str | None = None
    duration_seconds: float | None = None
    usage: Usage | None = None
    cost_usd: float | None = None
    output_tail: str | None = None
    history_level: HistoryLevel | None = None
    history_skipped: int | None = None
    native_session_id: str | None = None
    transcript_path: str | None = None
    #: the immutable policy document (execution/show only)
    policy: dict[str, Any] | None = None


class LaunchSpec(Wire):
    argv: list[str]
    env: dict[str, str]
    cwd: str


class ContinueParams(Wire):
    thread_id: str
    runtime: str | None = None
    agent: str | None = None
    kind: Kind = "interactive"
    headless: bool = False
    prompt: str | None = None
    if_revision: int | None = None
    args: list[str] = msgspec.field(default_factory=list)
    cwd: str | None = None
    door: str = "cli"


class StartParams(Wire):
    """thread/start: a new thread and its root #1 in one call (what bare `alp` does)."""

    title: str | None = None
    runtime: str | None = None
    agent: str | None = None
    headless: bool = False
    prompt: str | None = None
    args: list[str] = msgspec.field(default_factory=list)
    cwd: str | None = None
    door: str = "cli"


class ContinueResult(Wire):
    thread: Thread
    execution: Execution
    session_context_path: str
    launch: LaunchSpec | None = None


class SettleParams(Wire):
    execution_id: str
    outcome: Outcome
    thread_id: str | None = None
    exit_code: int | None = None
    summary: str | None = None


class AttachParams(Wire):
    execution_id: str
    pid: int


class ExecutionRef(Wire):
    execution_id: str


class WaitParams(Wire):
    execution_id: str
    timeout: float | None = None


class PinParams(Wire):
    kind: PinKind
    text: str


class PinResult(Wire):
    execution_id: str
    thread_id: str | None
    kind: PinKind
    text: str
    at: str
    checkpoint_digest: str
    pins: int


class DelegateParams(Wire):
    agent: str
    task: str
    args: list[str] = msgspec.field(default_factory=list)


class DelegateResult(Wire):
    execution: Execution
    session_context_path: str


class TreeParams(Wire):
    execution_id: str | None = None


class TreeNode(Wire):
    execution: Execution
    binding: str
    children: list[TreeNode] = msgspec.field(default_factory=list)


class ContextParams(Wire):
    thread_id: str
    revision: int | None = None


class ContextResult(Wire):
    thread_id: str
    revision: int
    digest: str
    #: the snapshot (alpd.domain.context.Snapshot, camelCase); every line has sourceExecutionId
    snapshot: dict[str, Any]


class HistorySummary(Wire):
    level: HistoryLevel
    entries: int = 0
    roots: int = 0


class ThreadShowParams(Wire):
    thread_id: str


class ThreadShowResult(Wire):
    thread: Thread
    roots: list[Execution]
    context: ContextResult
    history: HistorySummary
    children: int = 0


class ReconcileResult(Wire):
    thread: Thread
    settled: list[str]


class ExecutionChanged(Wire):
    execution: Execution
    change: str


NOTIFICATIONS["execution/changed"] = ExecutionChanged
