"""The method table: each method's params and result types, and one line of what it does.

The daemon binds a handler to every entry (a test checks none is missing) and the OpenRPC
document is generated from this table.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from protocol import messages as m


@dataclass(frozen=True, slots=True)
class MethodSpec:
    params: type[m.Wire]
    result: type[m.Wire]
    summary: str
    #: may wait for long (a run to settle, processes to end): served in its own task so the
    #: connection keeps answering; every other method is served inline, in order
    blocking: bool = False
    #: the domain errors (protocol.errors names) this method answers with, besides the ones
    #: any method may answer with (COMMON_ERRORS)
    errors: tuple[str, ...] = ()


#: what any method may answer: the caller is not the owner, an argument out of its domain,
#: the database full, the daemon on its way out
COMMON_ERRORS = ("PERMISSION_DENIED", "INVALID_ARGUMENT", "STORAGE_FULL", "SHUTTING_DOWN")

_THREAD = ("THREAD_NOT_FOUND",)
_THREAD_NAME_ERRORS = ("THREAD_NOT_FOUND", "THREAD_AMBIGUOUS")
_WRITE = (*_THREAD, "THREAD_REVISION_CONFLICT")
_EXECUTION = ("EXECUTION_NOT_FOUND",)
_SCHEDULE = ("SCHEDULE_NOT_FOUND",)
_MEMORY = ("MEMORY_NOT_FOUND", "MEMORY_TAMPERED")
_POLICY = ("EXECUTION_POLICY_TAMPERED",)
_LAUNCH = (
    "THREAD_BUSY",
    "THREAD_CLOSED",
    "THREAD_REVISION_CONFLICT",
    "THREAD_CONTEXT_TAMPERED",
    "RUNTIME_NOT_FOUND",
    "RUNTIME_UNAVAILABLE",
    "AGENT_NOT_FOUND",
    "SPAWN_FAILED",
    "WORKSPACE_NOT_FOUND",
    "BUDGET_EXCEEDED",
)
#: what a clear or an undo may meet: a running root, a closed thread, a chain or root that
#: no longer verifies
_STEP = (
    "THREAD_BUSY",
    "THREAD_CLOSED",
    "THREAD_CONTEXT_TAMPERED",
    "THREAD_EXECUTION_BINDING_MISMATCH",
    *_POLICY,
)


METHODS: dict[str, MethodSpec] = {
    "daemon/ping": MethodSpec(m.Empty, m.PingResult, "version, protocol and pid of the daemon"),
    "daemon/status": MethodSpec(m.Empty, m.StatusResult, "uptime, counts, paths, background tasks"),
    "daemon/reload": MethodSpec(
        m.Empty,
        m.ReloadResult,
        "re-read config.toml (as SIGHUP does); CONFIG_INVALID keeps the old",
        errors=("CONFIG_INVALID",),
    ),
    "daemon/sweep": MethodSpec(
        m.Empty,
        m.SweepResult,
        "run the background passes now and answer when they are done: every settle in flight "
        "with its after-settle work, a delivery sweep, a scheduler pass (what proves that "
        "nothing more happens)",
    ),
    "daemon/stop": MethodSpec(
        m.Empty, m.StopResult, "stop the daemon after the requests in flight (as SIGTERM does)"
    ),
    "daemon/doctor": MethodSpec(
        m.Empty,
        m.DoctorResult,
        "everything a person needs working, each ok/warn/fail with what to do: runtimes found "
        "and logged in (never calling a model), alp for the runs, socket, config, disk, web "
        "page, background tasks, chat channels",
    ),
    "thread/create": MethodSpec(m.ThreadCreateParams, m.Thread, "a new Thread; never reuses one"),
    "thread/list": MethodSpec(
        m.ThreadListParams, m.ThreadListResult, "threads of a workspace (default: the caller's)"
    ),
    "thread/close": MethodSpec(
        m.ThreadRef, m.Thread, "close a thread (no reopen)", errors=(*_WRITE, "THREAD_BUSY")
    ),
    "thread/archive": MethodSpec(
        m.ThreadRef, m.Thread, "archive a closed thread", errors=(*_WRITE, "THREAD_NOT_CLOSED")
    ),
    "thread/clear": MethodSpec(
        m.ThreadStepParams,
        m.ThreadStepResult,
        "a new context revision with an empty working context; nothing is deleted",
        errors=(*_WRITE, *_STEP),
    ),
    "thread/undo": MethodSpec(
        m.ThreadStepParams,
        m.ThreadStepResult,
        "take back the last settled root's contribution (never past a clear)",
        errors=(*_WRITE, *_STEP, "THREAD_NOTHING_TO_UNDO"),
    ),
    "thread/start": MethodSpec(
        m.StartParams,
        m.ContinueResult,
        "a new Thread and its root #1 (what bare `alp` does)",
        errors=(*_LAUNCH, "KIND_NOT_ALLOWED"),
    ),
    "thread/continue": MethodSpec(
        m.ContinueParams,
        m.ContinueResult,
        "open a new root on the current context",
        errors=(*_THREAD, *_LAUNCH, *_POLICY, "KIND_NOT_ALLOWED"),
    ),
    "thread/show": MethodSpec(
        m.ThreadShowParams,
        m.ThreadShowResult,
        "reconcile, then thread + roots + context",
        errors=(*_THREAD, "THREAD_CONTEXT_TAMPERED", "HISTORY_ENTRY_TAMPERED"),
    ),
    "thread/transcript": MethodSpec(
        m.TranscriptParams,
        m.TranscriptResult,
        "the thread's conversation across its roots, oldest first, cursor-paged both ways "
        "(live: the thread/transcript notification)",
        errors=(*_THREAD, "HISTORY_ENTRY_TAMPERED"),
    ),
    "thread/adopt": MethodSpec(
        m.ThreadAdoptParams,
        m.ThreadAdoptResult,
        "an imported native session becomes a settled root of a new (or given idle) thread",
        errors=(
            *_STEP,
            "THREAD_NOT_FOUND",
            "THREAD_REVISION_CONFLICT",
            "EXECUTION_NOT_FOUND",
            "SESSION_ALREADY_ADOPTED",
            "INVALID_ARGUMENT",
            "AGENT_NOT_FOUND",
        ),
    ),
    "thread/budget": MethodSpec(
        m.ThreadBudgetParams,
        m.ThreadBudgetResult,
        "a thread's budget over all its roots (USD and/or tokens, hard and soft): set, clear, "
        "or read with what was spent (docs/budgets.md)",
        errors=_THREAD,
    ),
    "thread/diff": MethodSpec(
        m.ThreadDiffParams,
        m.ThreadDiffResult,
        "what a root (default: the last step) changed in the workspace's files, from its "
        "checkpoints before and after: files with line counts, and the patch (cut)",
        errors=(*_THREAD, "CHECKPOINT_NOT_FOUND", *_POLICY),
    ),
    "thread/restore": MethodSpec(
        m.ThreadRestoreParams,
        m.ThreadRestoreResult,
        "put the workspace's files back to before a root (default: undo the last step, a "
        "restore included); refused when they changed since, unless force; the restore is "
        "checkpointed, so it can be undone",
        errors=(*_THREAD, "CHECKPOINT_NOT_FOUND", "WORKSPACE_CHANGED", "THREAD_BUSY", *_POLICY),
    ),
    "thread/export": MethodSpec(
        m.ThreadExportParams,
        m.ThreadExportResult,
        "the thread and everything that is its (chain, roots and policies, pins, steps, "
        "history, deliveries, reports, handoffs) as one bundle file with a manifest "
        "(docs/bundles.md); THREAD_BUSY while a root runs",
        errors=(*_THREAD, "THREAD_BUSY", "BUNDLE_TAMPERED", "BUNDLE_INVALID"),
    ),
    "thread/import": MethodSpec(
        m.ThreadImportParams,
        m.ThreadImportResult,
        "a bundle's thread, every digest checked first (BUNDLE_TAMPERED, BUNDLE_INVALID), "
        "owned by the caller; the same thread again changes nothing, another state of it or "
        "an id taken here is BUNDLE_CONFLICT",
        errors=("BUNDLE_INVALID", "BUNDLE_TAMPERED", "BUNDLE_CONFLICT"),
    ),
    "thread/recap": MethodSpec(
        m.ThreadRecapParams,
        m.ThreadRecap,
        "headline, gist and open tasks (derived by a model), with their source revision",
        errors=_THREAD,
    ),
    "thread/context": MethodSpec(
        m.ContextParams,
        m.ContextResult,
        "a snapshot, each line with sourceExecutionId",
        errors=(*_THREAD, "THREAD_CONTEXT_TAMPERED"),
    ),
    "thread/reconcile": MethodSpec(
        m.ThreadShowParams,
        m.ReconcileResult,
        "settle dead roots as interrupted",
        errors=(*_THREAD, "THREAD_CONTEXT_TAMPERED"),
    ),
    "context/pin": MethodSpec(
        m.PinParams,
        m.PinResult,
        "add a pin to the calling execution's checkpoint",
        errors=("PIN_OUTSIDE_EXECUTION", "EXECUTION_SETTLED", "EXECUTION_ROOT_SETTLED"),
    ),
    "execution/attach": MethodSpec(
        m.AttachParams,
        m.Execution,
        "register the pid of an interactive run the client started",
        errors=(*_EXECUTION, "EXECUTION_SETTLED"),
    ),
    "execution/settle": MethodSpec(
        m.SettleParams,
        m.Execution,
        "record the outcome of a root; projects its checkpoint",
        errors=(
            *_EXECUTION,
            "EXECUTION_SETTLED",
            "THREAD_EXECUTION_BINDING_MISMATCH",
            "THREAD_CONTEXT_TAMPERED",
            "HOST_LEASE_LOST",
            "HOST_NOT_OWNER",
        ),
    ),
    "execution/show": MethodSpec(
        m.ExecutionRef,
        m.Execution,
        "one execution, with its policy",
        errors=(*_EXECUTION, *_POLICY),
    ),
    "execution/wait": MethodSpec(
        m.WaitParams,
        m.Execution,
        "block until the execution settles",
        blocking=True,
        errors=_EXECUTION,
    ),
    "execution/logs": MethodSpec(
        m.LogsParams,
        m.LogsResult,
        "what a headless run printed, from byte offsets on (secrets filtered)",
        errors=_EXECUTION,
    ),
    "execution/cancel": MethodSpec(
        m.ExecutionRef,
        m.Execution,
        "end an execution; cascades down its graph",
        blocking=True,
        errors=(*_EXECUTION, "EXECUTION_SETTLED", "HOST_LEASE_LOST", "HOST_NOT_OWNER"),
    ),
    "execution/delegate": MethodSpec(
        m.DelegateParams,
        m.DelegateResult,
        "from inside a run: a child for an agent in delegatesTo",
        errors=(
            *_POLICY,
            "PIN_OUTSIDE_EXECUTION",
            "EXECUTION_SETTLED",
            "DELEGATION_DENIED",
            "AGENT_NOT_FOUND",
            "RUNTIME_NOT_FOUND",
            "RUNTIME_UNAVAILABLE",
            "SPAWN_FAILED",
        ),
    ),
    "delegation/tree": MethodSpec(
        m.TreeParams,
        m.TreeNode,
        "the graph of a root, with its thread or legacy-unthreaded",
        errors=("PIN_OUTSIDE_EXECUTION", *_EXECUTION),
    ),
    "thread/sync": MethodSpec(
        m.ThreadSyncParams,
        m.ThreadSyncResult,
        "re-run the history copy of every settled root; idempotent; history/progress",
        blocking=True,
        errors=_THREAD,
    ),
    "history/import": MethodSpec(
        m.HistoryImportParams,
        m.HistoryImportResult,
        "index existing native sessions as legacy-unthreaded executions; idempotent",
        blocking=True,
        errors=("HISTORY_READER_FAILED",),
    ),
    "history/search": MethodSpec(
        m.HistorySearchParams,
        m.HistorySearchResult,
        "search across the caller's threads and legacy imports: by keyword (bm25, snippets), "
        "by meaning (the meaning index), or both fused (hybrid, the default)",
        errors=(*_THREAD, "HISTORY_ENTRY_TAMPERED", "SEARCH_INDEX_NOT_READY"),
    ),
    "thread/push": MethodSpec(
        m.PushParams,
        m.PushResult,
        "wake an idle thread with a push root, or queue one round for a busy one",
        errors=(*_THREAD, *_LAUNCH, *_POLICY, "QUEUE_FULL"),
    ),
    "delivery/pending": MethodSpec(
        m.PendingParams,
        m.PendingResult,
        "from inside a run (its runtime's hook): the deliveries waiting for it, leased to it "
        "until acknowledged (unless peek)",
        errors=("PIN_OUTSIDE_EXECUTION",),
    ),
    "delivery/ack": MethodSpec(
        m.AckParams,
        m.AckResult,
        "from inside a run: the runtime has what delivery/pending handed out; record it "
        "injected, exactly once",
        errors=("PIN_OUTSIDE_EXECUTION",),
    ),
    "delivery/hold": MethodSpec(
        m.HoldParams,
        m.HoldResult,
        "from inside a run: don't interrupt it (hold true) — deliveries for it wait for the "
        "next round instead of its hook — or take them mid-run again (hold false); a hold "
        "ends when the run settles",
        errors=("PIN_OUTSIDE_EXECUTION",),
    ),
    "handoff/send": MethodSpec(
        m.HandoffSendParams,
        m.HandoffSendResult,
        "a capped summary into another thread of the same owner (from a run, or --from a "
        "thread); delivered by the target's state, a directive held in its inbox",
        errors=(
            *_THREAD,
            *_LAUNCH,
            *_POLICY,
            "PIN_OUTSIDE_EXECUTION",
            "HANDOFF_TOO_LARGE",
            "HANDOFF_DENIED",
            "HANDOFF_LOOP",
            "HANDOFF_RATE_LIMITED",
            "QUEUE_FULL",
        ),
    ),
    "inbox/list": MethodSpec(
        m.InboxListParams,
        m.InboxListResult,
        "directive handoffs and memory proposals waiting for the person to confirm or dismiss them",
        errors=_THREAD,
    ),
    "inbox/confirm": MethodSpec(
        m.InboxItemRef,
        m.InboxConfirmResult,
        "deliver a waiting directive as the person's own words, or make a waiting memory "
        "proposal a memory",
        errors=(
            *_THREAD,
            *_LAUNCH,
            *_POLICY,
            "INBOX_ITEM_NOT_FOUND",
            "HANDOFF_DENIED",
            "QUEUE_FULL",
        ),
    ),
    "inbox/dismiss": MethodSpec(
        m.InboxItemRef,
        m.Handoff,
        "drop a waiting directive (its record stays; a memory proposal: memory/dismiss)",
        errors=("INBOX_ITEM_NOT_FOUND", "HANDOFF_DENIED"),
    ),
    "events/subscribe": MethodSpec(
        m.SubscribeParams, m.SubscribeResult, "server notifications on this connection"
    ),
    "schedule/create": MethodSpec(
        m.ScheduleCreateParams,
        m.Schedule,
        "a schedule on a thread: cron (IANA zone), every DURATION or at TIME",
        errors=(*_THREAD, *_LAUNCH, *_POLICY, "SCHEDULE_INVALID"),
    ),
    "schedule/list": MethodSpec(
        m.ScheduleListParams, m.ScheduleListResult, "the caller's schedules (of one thread)"
    ),
    "schedule/show": MethodSpec(m.ScheduleRef, m.Schedule, "one schedule", errors=_SCHEDULE),
    "schedule/pause": MethodSpec(
        m.ScheduleRef, m.Schedule, "stop firing until resumed", errors=_SCHEDULE
    ),
    "schedule/resume": MethodSpec(
        m.ScheduleRef,
        m.Schedule,
        "fire again from now (fires while paused are not caught up)",
        errors=_SCHEDULE,
    ),
    "schedule/delete": MethodSpec(
        m.ScheduleRef, m.Schedule, "remove a schedule; its runs stay", errors=_SCHEDULE
    ),
    "schedule/run": MethodSpec(
        m.ScheduleRef,
        m.ScheduleRunResult,
        "fire now, out of turn (queued once if busy)",
        errors=(*_SCHEDULE, *_LAUNCH, *_POLICY, "QUEUE_FULL"),
    ),
    "daemon/ps": MethodSpec(
        m.PsParams,
        m.PsResult,
        "what is running: roots and children, queued deliveries, schedules, the daemon's "
        "services; cost per job",
    ),
    "web/open": MethodSpec(
        m.WebOpenParams,
        m.WebOpenResult,
        "serve the web page on 127.0.0.1 (if not yet) and make a one-time login URL",
        errors=("WEB_UNAVAILABLE",),
    ),
    "activity/list": MethodSpec(
        m.ActivityParams,
        m.ActivityResult,
        "what ran, newest first: kind, origin, outcome, report and cost",
    ),
    "memory/add": MethodSpec(
        m.MemoryAddParams,
        m.Memory,
        "the person writes a memory: one cited statement (kind, scope, optional file and "
        "history entries)",
        errors=("HISTORY_ENTRY_NOT_FOUND",),
    ),
    "memory/list": MethodSpec(
        m.MemoryListParams,
        m.MemoryListResult,
        "memories of this workspace and the global ones (or all), newest change first",
    ),
    "memory/show": MethodSpec(
        m.MemoryRef,
        m.MemoryShowResult,
        "a memory, its versions (chain verified) and its citation",
        errors=_MEMORY,
    ),
    "memory/supersede": MethodSpec(
        m.MemorySupersedeParams,
        m.Memory,
        "a new version with a new text; the old one is superseded",
        errors=_MEMORY,
    ),
    "memory/retract": MethodSpec(
        m.MemoryRef,
        m.Memory,
        "a retracting version: the memory never reaches a run again",
        errors=("MEMORY_NOT_FOUND",),
    ),
    "memory/review": MethodSpec(
        m.MemoryReviewParams,
        m.MemoryReviewResult,
        "confirm memories still true; list those not confirmed for `days` days and those "
        "whose cited file changed",
        errors=_MEMORY,
    ),
    "memory/promote": MethodSpec(
        m.MemoryPromoteParams,
        m.Memory,
        "a pinned line of a thread's current context becomes a memory citing it",
        errors=(*_THREAD, "THREAD_CONTEXT_TAMPERED"),
    ),
    "memory/dismiss": MethodSpec(
        m.InboxItemRef,
        m.MemoryProposal,
        "drop a run's memory proposal waiting in the inbox (its record stays)",
        errors=("INBOX_ITEM_NOT_FOUND",),
    ),
    "memory/propose": MethodSpec(
        m.MemoryProposeParams,
        m.MemoryProposal,
        "from inside a run: a memory proposal into the person's inbox (never a memory)",
        errors=("PIN_OUTSIDE_EXECUTION",),
    ),
    "channel/list": MethodSpec(
        m.ChannelListParams,
        m.ChannelListResult,
        "the chat doors (Telegram, WeCom): configured or not, their state, who may speak",
    ),
    "channel/pair": MethodSpec(
        m.ChannelPairParams,
        m.ChannelPairResult,
        "a one-time code that binds the chat sender who sends it to this alpd's owner",
        errors=("CHANNEL_NOT_CONFIGURED", "CHANNEL_UNAVAILABLE"),
    ),
    "channel/unpair": MethodSpec(
        m.ChannelUnpairParams,
        m.ChannelUnpairResult,
        "take a sender off a channel's allow-list",
    ),
    "channel/mute": MethodSpec(
        m.ChannelMuteParams,
        m.ThreadMute,
        "no chat is sent the thread's notices of these kinds (reports, handoffs, failures, "
        "budget); answers, approvals and proposals still come",
    ),
    "channel/unmute": MethodSpec(
        m.ChannelMuteParams,
        m.ThreadMute,
        "the thread's notices of these kinds (default: all) reach the chats again",
    ),
    "thread/say": MethodSpec(
        m.SayParams,
        m.SayResult,
        "a person's turn typed at a chat door: an interactive root of the idle thread, "
        "else queued or injected into the running one (as thread/push decides)",
        errors=(*_LAUNCH, "QUEUE_FULL"),
    ),
    "approval/request": MethodSpec(
        m.ApprovalParams,
        m.ApprovalResult,
        "a run asks the person (on a paired chat) for a permission; deny by the timeout",
        blocking=True,
        errors=("PIN_OUTSIDE_EXECUTION",),
    ),
}

#: what a run may not aim at another thread than its own, or may not ask at all (only the
#: person confirms a directive or opens the web page): NOT_FROM_A_RUN (docs/architecture.md,
#: "A run steers only its own thread")
NOT_FROM_A_RUN_METHODS = (
    "thread/clear",
    "thread/undo",
    "thread/adopt",
    "thread/export",
    "thread/import",
    "thread/restore",
    "thread/push",
    "thread/continue",
    "schedule/create",
    "schedule/pause",
    "schedule/resume",
    "schedule/delete",
    "schedule/run",
    "execution/settle",
    "execution/cancel",
    "handoff/send",
    "inbox/confirm",
    "inbox/dismiss",
    "web/open",
    "memory/add",
    "memory/supersede",
    "memory/retract",
    "memory/review",
    "memory/promote",
    "memory/dismiss",
    "channel/pair",
    "channel/unpair",
    "channel/mute",
    "channel/unmute",
    "thread/say",
    "thread/budget",
)
for _name in NOT_FROM_A_RUN_METHODS:
    METHODS[_name] = replace(METHODS[_name], errors=(*METHODS[_name].errors, "NOT_FROM_A_RUN"))

#: a `threadId` param takes any name of a thread (an id, an id prefix, a title, `@last`),
#: resolved by the daemon before the method runs: THREAD_AMBIGUOUS or THREAD_NOT_FOUND
#: (docs/architecture.md, "Naming threads"); so do handoff/send's target and inbox/list's thread
#: `execution/settle`'s threadId is not a name but the caller's claim of the execution's
#: thread, checked as given (THREAD_EXECUTION_BINDING_MISMATCH)
NAMED_THREAD_METHODS = tuple(
    name
    for name, spec in METHODS.items()
    if ("thread_id" in spec.params.__struct_fields__ and name != "execution/settle")
    or name in ("handoff/send", "inbox/list")
)
for _name in NAMED_THREAD_METHODS:
    _missing = tuple(e for e in _THREAD_NAME_ERRORS if e not in METHODS[_name].errors)
    METHODS[_name] = replace(METHODS[_name], errors=(*METHODS[_name].errors, *_missing))
