"""Roots and runs of a thread: continue, start, settle, attach, wait, logs, pin, delegate,
tree, context; what a run nobody watched reports; `execution/changed`."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from protocol.messages.base import (
    PIN_MAX_BYTES,
    AbsolutePath,
    BudgetTokens,
    BudgetUsd,
    ExecutionStatus,
    ExitCode,
    HistoryLevel,
    Kind,
    Outcome,
    Pid,
    PinKind,
    Revision,
    Text,
    Timeout,
    TimeoutSeconds,
    Title,
    Wire,
    byte_capped,
)
from protocol.messages.threads import Thread


class Origin(Wire):
    """Why an execution exists; written by the daemon, never by a client (see
    alpd.domain.runs.policy.Origin for what each field means per kind)."""

    door: str
    by: str
    parent_execution_id: str | None = None
    schedule_id: str | None = None
    fire_time: str | None = None
    missed: int | None = None
    push_source: str | None = None
    handoff_id: str | None = None
    purpose: str | None = None
    #: `thread/adopt`: the legacy-unthreaded execution (an imported session) this root reads
    adopted_from: str | None = None
    #: where its report goes besides its thread (a schedule's or a push's `to`, resolved)
    report_to: list[str] | None = None


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
    #: the host that runs it (id, and its name then; docs/many-machines.md), and the host
    #: that settled it when that is another (it took the run's host over)
    host_id: str | None = None
    host_name: str | None = None
    settled_by: str | None = None
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
    #: only `interactive` (a headless run a person starts is still theirs): every other kind
    #: is started by the daemon itself, and claiming one is KIND_NOT_ALLOWED
    kind: Kind = "interactive"
    headless: bool = False
    prompt: Text | None = None
    if_revision: Revision | None = None
    args: list[str] = msgspec.field(default_factory=list)
    cwd: AbsolutePath | None = None
    door: str = "cli"
    #: never accepted: the daemon writes every origin (KIND_NOT_ALLOWED when present)
    origin: dict[str, Any] | None = None
    #: this root's time limit and cost cap (default: its agent's); outcome `timed-out` /
    #: `budget-exceeded` when reached
    timeout_seconds: TimeoutSeconds | None = None
    budget_usd: BudgetUsd | None = None
    #: this root's cap in tokens (input + output + cache; default: its agent's)
    budget_tokens: BudgetTokens | None = None


class StartParams(Wire):
    """thread/start: a new thread and its root #1 in one call (what bare `alp` does)."""

    title: Title | None = None
    runtime: str | None = None
    agent: str | None = None
    headless: bool = False
    prompt: Text | None = None
    args: list[str] = msgspec.field(default_factory=list)
    cwd: AbsolutePath | None = None
    door: str = "cli"
    timeout_seconds: TimeoutSeconds | None = None
    budget_usd: BudgetUsd | None = None
    #: this root's cap in tokens (input + output + cache; default: its agent's)
    budget_tokens: BudgetTokens | None = None


class ContinueResult(Wire):
    thread: Thread
    execution: Execution
    session_context_path: str
    launch: LaunchSpec | None = None


class SettleParams(Wire):
    execution_id: str
    outcome: Outcome
    thread_id: str | None = None
    exit_code: ExitCode | None = None
    summary: Text | None = None


class AttachParams(Wire):
    execution_id: str
    pid: Pid


class ExecutionRef(Wire):
    execution_id: str


class WaitParams(Wire):
    execution_id: str
    timeout: Timeout | None = None


class LogsParams(Wire):
    execution_id: str
    #: byte offsets to read on from (the previous result's): follow a run by asking again
    #: (at most 2**53 - 1, an integer every JSON reader keeps exact; past the log's end is
    #: INVALID_ARGUMENT)
    stdout_offset: Annotated[int, msgspec.Meta(ge=0, le=2**53 - 1)] = 0
    stderr_offset: Annotated[int, msgspec.Meta(ge=0, le=2**53 - 1)] = 0
    limit: Annotated[int, msgspec.Meta(ge=1, le=4_194_304)] = 1_048_576


class LogsResult(Wire):
    execution_id: str
    #: what the run printed from the offsets on, whole lines, secrets filtered out
    stdout: str
    stderr: str
    stdout_offset: int
    stderr_offset: int
    #: the run has ended: once a read returns nothing new, there is no more
    settled: bool
    #: an interactive run printed to its terminal, not to alpd: it has no logs
    headless: bool
    #: the run's thread (None: a session imported from before alp, in no thread yet)
    thread_id: str | None = None


class PinParams(Wire):
    kind: PinKind
    text: Annotated[
        str,
        byte_capped(
            PIN_MAX_BYTES,
            "one line of work state (for resolve: an open item's id or exact text)",
        ),
    ]


class OpenItem(Wire):
    id: str
    text: str


class PinResult(Wire):
    execution_id: str
    thread_id: str | None
    kind: PinKind
    text: str
    at: str
    checkpoint_digest: str
    pins: int
    #: for `resolve`: whether an open item has this id or text now (a resolve that matches
    #: nothing is still recorded, as `matched: false`, when the run settles)
    matched: bool | None = None
    #: for a `resolve` that matched nothing: the open items it could have named
    open_items: list[OpenItem] | None = None


class DelegateParams(Wire):
    agent: str
    task: Text
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
    revision: Revision | None = None


class ContextResult(Wire):
    thread_id: str
    revision: int
    digest: str
    #: the snapshot (alpd.domain.threads.context.Snapshot, camelCase); every line has
    #: sourceExecutionId
    snapshot: dict[str, Any]
    #: every compaction up to this revision, oldest first, each listing ALL the lines it
    #: dropped or truncated (kind, id, sourceExecutionId); the snapshot keeps a bounded copy
    compactions: list[dict[str, Any]] = msgspec.field(default_factory=list)


class Report(Wire):
    """What a run nobody watched (a non-interactive root, a sub-agent) left in its thread."""

    id: int
    thread_id: str
    execution_id: str
    kind: Kind
    agent: str
    runtime: str
    origin: Origin
    outcome: Outcome
    #: the run's final reply, or the last lines of its output; secret-filtered
    message: str
    #: `transcript` or `output`
    message_source: str
    at: str
    cost_usd: float | None = None
    duration_seconds: float | None = None
    usage: Usage | None = None
    notify: bool = False
    #: for a sub-agent: the execution that delegated it
    parent_execution_id: str | None = None


class ThreadReport(Wire):
    """`thread/report`: a report someone asked to hear about (`--notify`)."""

    report: Report
    thread_title: str | None = None


class ExecutionChanged(Wire):
    execution: Execution
    change: str


__all__ = [
    "AttachParams",
    "ContextParams",
    "ContextResult",
    "ContinueParams",
    "ContinueResult",
    "DelegateParams",
    "DelegateResult",
    "Execution",
    "ExecutionChanged",
    "ExecutionRef",
    "LaunchSpec",
    "LogsParams",
    "LogsResult",
    "OpenItem",
    "Origin",
    "PinParams",
    "PinResult",
    "Report",
    "SettleParams",
    "StartParams",
    "ThreadReport",
    "TreeNode",
    "TreeParams",
    "Usage",
    "WaitParams",
]
