"""Wire types: the params and result of every method, as msgspec Structs.

Compatibility rules (msgspec's schema-evolution guide): a new field gets a default; an
existing field never changes type or meaning; names are camelCase on the wire. Optional
fields are omitted when unset, so old clients see nothing new unless they ask.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

PROTOCOL_VERSION = 1

ThreadStatus = Literal["open", "closed", "archived"]
Kind = Literal["interactive", "push", "scheduled", "sub-agent", "temp"]
Outcome = Literal["completed", "failed", "cancelled", "interrupted"]
ExecutionStatus = Literal["reserved", "running", "settled"]
PinKind = Literal["objective", "decision", "constraint", "open-item", "next-action", "resolve"]
HistoryLevel = Literal["complete", "partial", "final-only", "unsupported", "pending"]
#: how clear and undo label a root's history entries (alpd.domain.steering)
HistoryLabel = Literal["before-clear", "undone"]


# Bounds of the params (checked once, when a request is decoded; a value outside them is
# -32602 naming the field). They are what the OS and SQLite accept, so a valid-typed value
# never reaches them to fail there as -32603.

#: an absolute filesystem path as a client sends it (its cwd): never relative to the
#: daemon's own directory, never with a NUL byte, within PATH_MAX (4096 with its NUL) and
#: NAME_MAX (255 bytes a name; the pattern counts characters, the OS bytes)
AbsolutePath = Annotated[
    str, msgspec.Meta(pattern="^(?:/+[^/\x00]{1,255})*/*$", min_length=1, max_length=4095)
]
#: a pid_t: what kill(2) and /proc take (0 and negatives name process groups, never a run)
Pid = Annotated[int, msgspec.Meta(ge=1, le=2**31 - 1)]
#: an exit status as a shell reports it, or minus a signal number (what wait(2) can give)
ExitCode = Annotated[int, msgspec.Meta(ge=-(2**31), le=2**31 - 1)]
#: a thread revision (a SQLite INTEGER is 64-bit; JSON numbers are exact to 2**53)
Revision = Annotated[int, msgspec.Meta(ge=0, le=2**53)]
#: a thread's title: one line a person reads in a listing
Title = Annotated[str, msgspec.Meta(max_length=1024)]
#: free text a person or a run writes (a prompt, a summary, a delegated task): 256 KiB
Text = Annotated[str, msgspec.Meta(max_length=256 * 1024)]
#: the name of a door a request came through: one short lowercase word
DoorName = Annotated[str, msgspec.Meta(pattern="^[a-z][a-z0-9-]{0,31}$")]
#: seconds to wait (a week at most: a longer wait is a mistake, not a plan)
Timeout = Annotated[float, msgspec.Meta(ge=0, le=7 * 24 * 3600)]


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
    #: the last failure of a failing task, as `Type: message`
    last_error: str | None = None


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
    #: the kind of the newest root (thread/list only), None before the first
    last_kind: Kind | None = None
    #: the recap's headline (derived by a model, not authority); `thread/list` only
    headline: str | None = None


class ReloadResult(Wire):
    #: the file read (the built-in defaults when it does not exist)
    config: str
    agents: list[str]
    runtimes: list[str]


class StopResult(Wire):
    #: the daemon that is stopping: it finishes the requests in flight, then exits
    pid: int


class ThreadCreateParams(Wire):
    title: Title | None = None
    workspace: AbsolutePath | None = None
    cwd: AbsolutePath | None = None


class ThreadRef(Wire):
    thread_id: str
    if_revision: Revision | None = None


class ThreadListParams(Wire):
    workspace: AbsolutePath | None = None
    cwd: AbsolutePath | None = None
    #: every workspace and every status
    all: bool = False
    #: only this status (as `statuses: [status]`)
    status: ThreadStatus | None = None
    #: only these statuses; default: open threads only (with `all`: every status)
    statuses: list[ThreadStatus] | None = None
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
    """Why an execution exists; written by the daemon, never by a client (see
    alpd.domain.policy.Origin for what each field means per kind)."""

    door: str
    by: str
    parent_execution_id: str | None = None
    schedule_id: str | None = None
    fire_time: str | None = None
    missed: int | None = None
    push_source: str | None = None
    handoff_id: str | None = None
    purpose: str | None = None


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
    stdout_offset: Annotated[int, msgspec.Meta(ge=0)] = 0
    stderr_offset: Annotated[int, msgspec.Meta(ge=0)] = 0
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


class PinParams(Wire):
    kind: PinKind
    text: str


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
    #: the snapshot (alpd.domain.context.Snapshot, camelCase); every line has sourceExecutionId
    snapshot: dict[str, Any]
    #: every compaction up to this revision, oldest first, each listing ALL the lines it
    #: dropped or truncated (kind, id, sourceExecutionId); the snapshot keeps a bounded copy
    compactions: list[dict[str, Any]] = msgspec.field(default_factory=list)


class RootHistory(Wire):
    """How much of one root's transcript history holds (thread/show, thread/sync)."""

    execution_id: str
    level: HistoryLevel
    entries: int = 0
    skipped: int = 0
    #: an earlier execution this one continues (same native session: `resume`) or forks
    links_to: str | None = None
    link_kind: str | None = None


class HistorySummary(Wire):
    level: HistoryLevel
    entries: int = 0
    roots: int = 0
    by_root: list[RootHistory] = msgspec.field(default_factory=list)


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


HandoffStatus = Literal["sending", "sent", "inbox", "confirmed", "dismissed", "failed"]
#: how a handoff reached its thread: a root woken for it, a round after the running root, or
#: taken mid-run by the running root (alp's runtime hooks); `inbox`: waits for the person
HandoffPath = Literal["wake", "queue", "inject", "inbox"]


class Artifact(Wire):
    """A file a handoff points at: left where it is (never copied), recorded as it was."""

    path: str
    size: int
    sha256: str


class Handoff(Wire):
    """A capped summary one thread delivered into another of the same owner."""

    id: str
    source_thread_id: str
    target_thread_id: str
    #: what the summary says, secret-filtered, at most 4 KiB
    summary: str
    #: held in the target's inbox until the person confirms it
    directive: bool
    #: the loop guards' chain and this handoff's hop in it (1: a new chain)
    chain_id: str
    hop: int
    status: HandoffStatus
    sent_at: str
    source_title: str | None = None
    target_title: str | None = None
    #: the run that sent it (None: a person, from a shell, with `--from`)
    source_execution_id: str | None = None
    artifacts: list[Artifact] = msgspec.field(default_factory=list)
    #: how it reached the target, when, and the execution that received it; while it waits
    #: (no `deliveredAt`), the path it is on (`inject`: for the running root to take mid-run)
    path: HandoffPath | None = None
    delivered_at: str | None = None
    delivered_execution_id: str | None = None
    #: a directive: when the person confirmed or dismissed it
    decided_at: str | None = None
    error: str | None = None


class ThreadShowParams(Wire):
    thread_id: str


class ContextStep(Wire):
    """A context revision a person wrote (`thread/clear`, `thread/undo`), not a settling root."""

    #: `clear`: an empty working context; `undo`: the content of `restoredRevision`
    kind: Literal["clear", "undo"]
    #: the context revision the step wrote
    revision: int
    #: the head it replaced (revision - 1): still readable with `thread/context`
    replaced_revision: int
    #: who asked (`uid:N`) and through which door
    by: str
    door: str
    at: str
    #: undo: the revision whose content was restored (the one the undone root opened on)
    restored_revision: int | None = None
    #: undo: the root whose contribution was taken back
    execution_id: str | None = None


class ThreadStepParams(Wire):
    """thread/clear and thread/undo."""

    thread_id: str
    if_revision: Revision | None = None
    #: how the request came in (`cli`, `editor`, `web`, `mcp` …), recorded with the step
    door: DoorName = "cli"


class ThreadStepResult(Wire):
    thread: Thread
    step: ContextStep
    #: the digest of the revision the step wrote
    digest: str


class RecapState(Wire):
    """Whether recaps are refreshed; when not, why and how to turn them on."""

    available: bool
    #: `runtime` (claude -p) or `api`
    summariser: str
    reason: str | None = None
    hint: str | None = None


class ThreadRecapParams(Wire):
    thread_id: str


class ThreadRecap(Wire):
    """A thread's recap: headline, gist and open tasks kept by a cheap model from its
    history and context — derived, never authority. Absent fields: none was made yet."""

    thread_id: str
    state: RecapState
    #: a refresh is running (or one is owed)
    refreshing: bool = False
    headline: str | None = None
    gist: str | None = None
    open_tasks: list[str] = msgspec.field(default_factory=list)
    #: the context revision it was made from, when, and by which `temp` execution
    source_revision: int | None = None
    made_at: str | None = None
    execution_id: str | None = None
    label: str | None = None


class ThreadShowResult(Wire):
    thread: Thread
    roots: list[Execution]
    context: ContextResult
    history: HistorySummary
    children: int = 0
    #: the last reports of background work in the thread, oldest first
    reports: list[Report] = msgspec.field(default_factory=list)
    #: the last handoffs this thread received and sent, oldest first
    handoffs_in: list[Handoff] = msgspec.field(default_factory=list)
    handoffs_out: list[Handoff] = msgspec.field(default_factory=list)
    #: every clear and undo of the thread, oldest first
    steps: list[ContextStep] = msgspec.field(default_factory=list)
    recap: ThreadRecap | None = None


class ReconcileResult(Wire):
    thread: Thread
    settled: list[str]


class ExecutionChanged(Wire):
    execution: Execution
    change: str


NOTIFICATIONS["execution/changed"] = ExecutionChanged
NOTIFICATIONS["thread/report"] = ThreadReport


# history/* (issue 5)


class ThreadSyncParams(Wire):
    thread_id: str
    #: echoed in `history/progress` notifications (to subscribers of that event)
    progress_token: str | None = None


class ThreadSyncResult(Wire):
    thread_id: str
    level: HistoryLevel
    entries: int
    added: int
    roots: list[RootHistory]


class HistoryImportParams(Wire):
    runtime: Literal["claude", "codex"]
    #: a directory of native sessions (default: ~/.claude/projects or $CODEX_HOME/sessions)
    path: AbsolutePath | None = None
    progress_token: str | None = None


class ImportedSession(Wire):
    native_session_id: str
    #: the transcript file read
    path: str
    #: the legacy-unthreaded execution that holds it (or the root alp started for it)
    execution_id: str
    #: imported (new), updated (imported before, more was read now), known (a root of a thread)
    status: Literal["imported", "updated", "known"]
    #: entries of the session in the history now, and how many this import added
    entries: int
    added: int
    #: lines that could not be read (the session is then `partial`)
    skipped: int
    #: completeness: complete, partial, final-only, unsupported (None: nothing read yet)
    level: HistoryLevel | None = None


class HistoryImportResult(Wire):
    runtime: str
    path: str
    files: int
    imported: int
    updated: int
    added: int
    skipped: int
    #: sessions already owned by an execution alp started (synced there, not re-imported)
    known: int = 0
    #: every session read, in the order read
    sessions: list[ImportedSession] = msgspec.field(default_factory=list)


class HistoryProgress(Wire):
    token: str | None
    operation: Literal["sync", "import"]
    done: int
    total: int
    added: int = 0
    bytes: int = 0
    total_bytes: int = 0
    path: str | None = None


NOTIFICATIONS["history/progress"] = HistoryProgress

SearchRole = Literal["user", "assistant", "tool", "system"]


class HistorySearchParams(Wire):
    query: str
    thread_id: str | None = None
    runtime: str | None = None
    role: SearchRole | None = None
    #: ISO 8601 bounds on the entry's time (a thread document's: its last update)
    since: str | None = None
    until: str | None = None
    limit: int = 20
    highlight_start: str = "**"
    highlight_end: str = "**"


class SearchHit(Wire):
    #: `entry` (a history entry) or `thread` (a thread's title and context lines)
    source: Literal["entry", "thread"]
    snippet: str
    score: float
    thread_id: str | None = None
    thread_title: str | None = None
    execution_id: str | None = None
    #: the root's sequence in its thread; None for legacy-unthreaded imports
    sequence: int | None = None
    runtime: str | None = None
    role: str | None = None
    kind: str | None = None
    at: str | None = None
    native_session_id: str | None = None
    legacy: bool = False
    #: `before-clear` (its root opened before a clear of the thread), `undone` (its root's
    #: contribution was undone): kept and searchable, never read by a recap
    labels: list[HistoryLabel] = msgspec.field(default_factory=list)


class HistorySearchResult(Wire):
    hits: list[SearchHit]
    #: which index answered: `words` (unicode61), `trigram` (CJK), `like` (short CJK terms)
    index: str
    #: the FTS5 expression the query became (empty when nothing searchable was left)
    expression: str = ""


# thread/push, delivery/pending (issue 10)

#: `started`: an idle thread was woken; `injecting`: its running root takes it mid-work (its
#: runtime's hook), or the next round if the run ends first; `queued`: it waits for the
#: running root to settle; `coalesced`: the same waiting delivery was already queued
DeliveryStatus = Literal["started", "injecting", "queued", "coalesced"]


class PushParams(Wire):
    thread_id: str
    #: the message; the run receives it under a one-line envelope naming `source`
    text: str
    #: who is pushing, a human label (`ci`, `disk-alert`, `webhook:github`)
    source: str
    #: the agent to run (default: the agent of the thread's last root)
    agent: str | None = None
    #: announce the run's report (`thread/report`, a desktop notification)
    notify: bool = False
    door: str = "cli"


class PushResult(Wire):
    delivery_id: int
    status: DeliveryStatus
    #: deliveries of the thread still waiting (this one included when queued)
    waiting: int
    execution: Execution | None = None


class PendingParams(Wire):
    #: look without taking (a taken delivery is never delivered again)
    peek: bool = False


class PendingDelivery(Wire):
    id: int
    source_kind: str
    envelope: str
    text: str
    at: str


class PendingResult(Wire):
    deliveries: list[PendingDelivery]
    #: the deliveries as one text for the runtime: a line saying what it is, then each
    #: envelope and its text ("" when nothing waits)
    context: str = ""
    #: the hand-out is held for the caller until then; acknowledge it (`delivery/ack`) once
    #: the runtime has the text, else it is handed out again
    lease_until: str | None = None


#: a hook acknowledges what one hand-out gave it (at most 100 deliveries)
AckIds = Annotated[list[int], msgspec.Meta(max_length=100)]


class AckParams(Wire):
    ids: AckIds


class AckResult(Wire):
    #: the deliveries now recorded as injected into the caller's run (each exactly once)
    acked: list[int]
    #: those that were not (lease lost: handed out again, or delivered by a round meanwhile)
    missed: list[int]


# schedule/* (issue 10)

CatchUp = Literal["one", "none"]
ScheduleStatus = Literal["active", "paused", "stopped", "done"]
#: a cron expression, a duration, an ISO time or an IANA zone name: one short line
RuleText = Annotated[str, msgspec.Meta(max_length=256)]
#: a row count a listing returns at most
ListLimit = Annotated[int, msgspec.Meta(ge=1, le=1000)]


class ScheduleCreateParams(Wire):
    """Exactly one of `cron`, `every`, `at`. `timezone` (IANA) reads a cron expression and an
    `at` without an offset on that zone's wall clock (default UTC; `alp` sends its own)."""

    thread_id: str
    prompt: Text
    cron: RuleText | None = None
    every: RuleText | None = None
    at: RuleText | None = None
    timezone: RuleText = "UTC"
    agent: str | None = None
    runtime: str | None = None
    notify: bool = False
    #: fires missed while alpd was down: `one` coalesces them into one run, `none` skips them
    catch_up: CatchUp = "one"


class Schedule(Wire):
    id: str
    thread_id: str
    #: `cron 0 3 * * * (Europe/Berlin)`, `every 2h`, `at 2026-12-01T02:00:00+00:00`
    rule: str
    prompt: str
    timezone: str
    status: ScheduleStatus
    catch_up: CatchUp
    notify: bool
    created_at: str
    updated_at: str
    thread_title: str | None = None
    cron: str | None = None
    every: str | None = None
    at: str | None = None
    agent: str | None = None
    runtime: str | None = None
    #: why a schedule stopped (its thread was closed …)
    stop_reason: str | None = None
    next_fire_at: str | None = None
    last_fire_at: str | None = None
    last_execution_id: str | None = None
    #: outcome of the last run (`running` while it runs)
    last_result: str | None = None
    #: a fire waiting for its busy thread (one at most)
    queued_fire_at: str | None = None
    #: runs started, and due fires that got no run of their own (coalesced or skipped)
    runs: int = 0
    missed: int = 0
    #: USD over all its runs, as the runtimes reported or the config's prices gave
    cost_usd: float | None = None


class ScheduleRef(Wire):
    schedule_id: str


class ScheduleListParams(Wire):
    thread_id: str | None = None


class ScheduleListResult(Wire):
    schedules: list[Schedule]


class ScheduleRunResult(Wire):
    schedule: Schedule
    #: `started`: a root opened; `queued`: the thread is busy, it runs when it settles
    status: Literal["started", "queued"]
    execution: Execution | None = None


class ScheduleChanged(Wire):
    schedule: Schedule
    change: str


NOTIFICATIONS["schedule/changed"] = ScheduleChanged


# daemon/ps, activity/list (issue 10)


class PsParams(Wire):
    #: include `temp` work, hidden by default
    all: bool = False


class PsJob(Wire):
    """A running root or delegated child."""

    execution_id: str
    root_id: str
    kind: Kind
    origin: Origin
    runtime: str
    agent: str
    status: ExecutionStatus
    created_at: str
    elapsed_seconds: float
    thread_id: str | None = None
    thread_title: str | None = None
    parent_id: str | None = None
    pid: int | None = None
    started_at: str | None = None
    usage: Usage | None = None
    #: input + output + cache tokens so far
    tokens: int = 0
    cost_usd: float | None = None


class PsDelivery(Wire):
    """A delivery waiting for its thread's running root: its hook (`route` inject) or its
    settle (`route` queue)."""

    id: int
    thread_id: str
    kind: str
    source: str
    queued_at: str
    thread_title: str | None = None
    route: str | None = None


class PsSchedule(Wire):
    """A schedule as `ps` shows it (`schedule/show` has the rest)."""

    id: str
    thread_id: str
    rule: str
    status: ScheduleStatus
    thread_title: str | None = None
    next_fire_at: str | None = None
    last_execution_id: str | None = None
    last_result: str | None = None
    queued_fire_at: str | None = None
    runs: int = 0
    missed: int = 0
    cost_usd: float | None = None


class PsDaemon(Wire):
    pid: int
    version: str
    uptime_seconds: float
    rss_bytes: int


class PsResult(Wire):
    daemon: PsDaemon
    jobs: list[PsJob]
    queued: list[PsDelivery]
    #: active and paused schedules
    schedules: list[PsSchedule]
    services: list[TaskState]
    #: `temp` jobs left out (ask with `all`)
    hidden: int = 0
    #: USD of the running jobs so far
    cost_usd: float = 0.0
    #: whether thread recaps are refreshed (and why not)
    recap: RecapState | None = None


class ActivityParams(Wire):
    #: ISO 8601; only what was created at or after it
    since: RuleText | None = None
    thread_id: str | None = None
    kind: Kind | None = None
    limit: ListLimit = 200


class ActivityItem(Wire):
    execution_id: str
    kind: Kind
    origin: Origin
    runtime: str
    agent: str
    status: ExecutionStatus
    created_at: str
    thread_id: str | None = None
    thread_title: str | None = None
    sequence: int | None = None
    outcome: Outcome | None = None
    started_at: str | None = None
    settled_at: str | None = None
    duration_seconds: float | None = None
    usage: Usage | None = None
    cost_usd: float | None = None
    #: the run's report: its final message (a non-interactive root), else its summary
    report: str | None = None


class ActivityResult(Wire):
    items: list[ActivityItem]
    #: USD of the listed runs
    cost_usd: float = 0.0


# web/open (issue 14)


class WebOpenParams(Wire):
    pass


class WebOpenResult(Wire):
    #: the page, e.g. http://127.0.0.1:8765/
    url: str
    #: opens the page once and sets its cookie; a new one is made by every web/open
    login_url: str
    port: int
    #: the file holding the page's token (0600), for scripts that send the cookie themselves
    token_file: str
    #: false when the page was already being served before this call
    started: bool


# handoff/send, inbox/* (issue 12)

#: a handoff's summary: what a person would paste; over 4 KiB it is HANDOFF_TOO_LARGE (the
#: frame bound is far above, so the size can be reported, never cut)
Summary = Annotated[str, msgspec.Meta(max_length=256 * 1024)]
#: files a handoff points at
ArtifactPaths = Annotated[list[AbsolutePath], msgspec.Meta(max_length=32)]


class HandoffSendParams(Wire):
    #: a thread id, or a thread's title (an ambiguous or unknown title lists the candidates)
    target: str
    summary: Summary
    #: absolute paths inside the source thread's workspace
    artifacts: ArtifactPaths = msgspec.field(default_factory=list)
    #: asks the target to act: held in its inbox until the person confirms it
    directive: bool = False
    #: the source thread (id or title) of a person sending from a shell; inside a run the
    #: source is the run's own thread, found by process ancestry
    source: str | None = msgspec.field(default=None, name="from")
    door: str = "cli"


class HandoffSendResult(Wire):
    handoff: Handoff
    #: the root woken for it (an idle target)
    execution: Execution | None = None


class HandoffDelivered(Wire):
    """`handoff/delivered`: a handoff reached its thread (woke it, a round, or mid-run)."""

    handoff: Handoff


NOTIFICATIONS["handoff/delivered"] = HandoffDelivered


class InboxListParams(Wire):
    #: one thread's (id or title); default: every thread of the caller
    thread: str | None = None


class InboxListResult(Wire):
    items: list[Handoff]


class InboxItemRef(Wire):
    id: str


class InboxConfirmResult(Wire):
    item: Handoff
    execution: Execution | None = None


class InboxChanged(Wire):
    """`inbox/changed`: an item arrived, or the person confirmed or dismissed one."""

    item: Handoff
    change: Literal["added", "confirmed", "dismissed"]


NOTIFICATIONS["inbox/changed"] = InboxChanged
