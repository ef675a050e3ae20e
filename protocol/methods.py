"""The method table: each method's params and result types, and one line of what it does.

The daemon binds a handler to every entry (a test checks none is missing) and the OpenRPC
document is generated from this table.
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol import messages as m


@dataclass(frozen=True, slots=True)
class MethodSpec:
    params: type[m.Wire]
    result: type[m.Wire]
    summary: str
    #: may wait for long (a run to settle, processes to end): served in its own task so the
    #: connection keeps answering; every other method is served inline, in order
    blocking: bool = False


METHODS: dict[str, MethodSpec] = {
    "daemon/ping": MethodSpec(m.Empty, m.PingResult, "version, protocol and pid of the daemon"),
    "daemon/status": MethodSpec(m.Empty, m.StatusResult, "uptime, counts, paths, background tasks"),
    "daemon/reload": MethodSpec(
        m.Empty,
        m.ReloadResult,
        "re-read config.toml (as SIGHUP does); CONFIG_INVALID keeps the old",
    ),
    "daemon/stop": MethodSpec(
        m.Empty, m.StopResult, "stop the daemon after the requests in flight (as SIGTERM does)"
    ),
    "thread/create": MethodSpec(m.ThreadCreateParams, m.Thread, "a new Thread; never reuses one"),
    "thread/list": MethodSpec(
        m.ThreadListParams, m.ThreadListResult, "threads of a workspace (default: the caller's)"
    ),
    "thread/close": MethodSpec(m.ThreadRef, m.Thread, "close a thread (no reopen)"),
    "thread/archive": MethodSpec(m.ThreadRef, m.Thread, "archive a closed thread"),
    "thread/start": MethodSpec(
        m.StartParams, m.ContinueResult, "a new Thread and its root #1 (what bare `alp` does)"
    ),
    "thread/continue": MethodSpec(
        m.ContinueParams, m.ContinueResult, "open a new root on the current context"
    ),
    "thread/show": MethodSpec(
        m.ThreadShowParams, m.ThreadShowResult, "reconcile, then thread + roots + context"
    ),
    "thread/context": MethodSpec(
        m.ContextParams, m.ContextResult, "a snapshot, each line with sourceExecutionId"
    ),
    "thread/reconcile": MethodSpec(
        m.ThreadShowParams, m.ReconcileResult, "settle dead roots as interrupted"
    ),
    "context/pin": MethodSpec(
        m.PinParams, m.PinResult, "add a pin to the calling execution's checkpoint"
    ),
    "execution/attach": MethodSpec(
        m.AttachParams, m.Execution, "register the pid of an interactive run the client started"
    ),
    "execution/settle": MethodSpec(
        m.SettleParams, m.Execution, "record the outcome of a root; projects its checkpoint"
    ),
    "execution/show": MethodSpec(m.ExecutionRef, m.Execution, "one execution, with its policy"),
    "execution/wait": MethodSpec(
        m.WaitParams, m.Execution, "block until the execution settles", blocking=True
    ),
    "execution/logs": MethodSpec(
        m.LogsParams,
        m.LogsResult,
        "what a headless run printed, from byte offsets on (secrets filtered)",
    ),
    "execution/cancel": MethodSpec(
        m.ExecutionRef, m.Execution, "end an execution; cascades down its graph", blocking=True
    ),
    "execution/delegate": MethodSpec(
        m.DelegateParams, m.DelegateResult, "from inside a run: a child for an agent in delegatesTo"
    ),
    "delegation/tree": MethodSpec(
        m.TreeParams, m.TreeNode, "the graph of a root, with its thread or legacy-unthreaded"
    ),
    "thread/sync": MethodSpec(
        m.ThreadSyncParams,
        m.ThreadSyncResult,
        "re-run the history copy of every settled root; idempotent; history/progress",
        blocking=True,
    ),
    "history/import": MethodSpec(
        m.HistoryImportParams,
        m.HistoryImportResult,
        "index existing native sessions as legacy-unthreaded executions; idempotent",
        blocking=True,
    ),
    "history/search": MethodSpec(
        m.HistorySearchParams,
        m.HistorySearchResult,
        "full-text search across the caller's threads and legacy imports (bm25, snippets)",
    ),
    "events/subscribe": MethodSpec(
        m.SubscribeParams, m.SubscribeResult, "server notifications on this connection"
    ),
}
