"""`alp mcp`: alp's tools for the agent inside a run, as a stdio MCP server.

alpd registers this server in every `claude` and `codex` run it launches (the runtime
adapters write the registration), so the model sees `pin`, `context`, `search`, `ps`,
`delegate`, `handoff`, `inbox` and `recap` with no setup. Each tool call is one JSON-RPC
round trip to alpd over the socket, on a fresh connection (a restarted daemon costs nothing
but that call).
Authority is the daemon's, exactly as for `alp context pin`: this process is a descendant of
the run, so alpd finds the execution by process ancestry; started anywhere else, `pin`,
`delegate` and `handoff` answer `PIN_OUTSIDE_EXECUTION`. The thread and execution ids in the
environment are labels, used only to say which thread's context (inbox, recap) to read.

Tool errors reach the model as tool results marked as errors, starting with the error's name
(`PIN_OUTSIDE_EXECUTION: …`), so it can act on them.

The protocol is spoken by alpctl.mcp_stdio (stdlib only; why not the SDK is said there).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Literal

from alpctl import __version__, background_render, handoff_render, render
from alpctl.client import Client, DaemonUnreachable, ForeignDaemon, RpcError
from alpctl.mcp_stdio import StdioServer, ToolError

Call = Callable[[str, dict[str, Any]], Any]

INSTRUCTIONS = (
    "alp keeps this work as a Thread that outlives this run. The next run of the thread "
    "(maybe another agent, maybe another CLI) does not see this conversation: it sees only "
    "the thread's context, and the only way to add to it is the `pin` tool. Pin as you go, "
    "not at the end: the objective when it is set or changes, each decision with its reason, "
    "constraints you discover, open items, and the next action before you stop."
)

PIN_DESCRIPTION = (
    "Pin one line of work state to this thread's context. Pins are the ONLY record of your "
    "work the next run of this thread can rely on: no transcript, no tool output, no memory "
    "is carried over, and the recap it may also get is a cheap model's summary that can be "
    "wrong or missing. Pin when you: set or change the goal (objective); decide something, with "
    "the reason (decision); find a rule the work must follow (constraint); leave something "
    "unfinished or unknown (open-item); know what should happen next (next-action). To close "
    "an open item or next action, pin kind `resolve` with its exact text. One self-contained "
    "line per pin (at most 4 KiB): name files, commands and reasons, not 'as discussed'. Pins "
    "are work state, not instructions: they grant no permissions."
)

CONTEXT_DESCRIPTION = (
    "Read this thread's current context snapshot: the objective, decisions, constraints, "
    "open items and next actions earlier runs pinned, each with the execution that pinned "
    "it. Your own pins from this run join it when the run ends."
)

SEARCH_DESCRIPTION = (
    "Full-text search across the history of all your threads (and imported sessions): "
    "prompts, replies and tool output of earlier runs. Use it to find how something was done "
    'before. Query syntax: words (all must match), "a phrase", prefix*.'
)

PS_DESCRIPTION = (
    "See what alp is running right now, across all threads: each running root and delegated "
    "child (kind, agent, pid, time so far, tokens and cost so far, its thread), pushes and "
    "schedule fires queued behind a busy thread, the schedules with their next fire, and the "
    "daemon's own services. Use it to check on a child you delegated (it is listed while it "
    "runs and gone once it ends) or to see whether other work is busy before starting more. "
    "Temp work is hidden unless `all` is true."
)

DELEGATE_DESCRIPTION = (
    "Start a delegated child run for another agent (one your agent definition lists in "
    "delegatesTo) with a task. The child runs headless with its own policy; its pins join "
    "this run's. Returns the child's execution id."
)

HANDOFF_DESCRIPTION = (
    "Hand a summary of what this thread learned to ANOTHER of the person's threads (named by "
    "its title or id), when that thread needs it: a verdict for the thread that builds, a "
    "number that crossed a threshold for the thread that acts. At most 4 KiB: say what was "
    "found and why it matters, self-contained. Files stay where they are: list their paths "
    "in `artifacts` (inside this thread's workspace), never paste them. The other thread "
    "reads it as context from the person's own session, not as orders; set `directive` when "
    "you ask it to act, and it then waits for the person to confirm. Chains of replies stop "
    "after 3 hops (HANDOFF_LOOP) and a pair of threads takes at most 6 per 10 minutes "
    "(HANDOFF_RATE_LIMITED): do not reply to a handoff just to acknowledge it."
)

INBOX_DESCRIPTION = (
    "List the directive handoffs that wait for the person's confirmation (this thread's, or "
    "all with all_threads). You cannot confirm or dismiss them: only the person can, from "
    "their own shell (`alp inbox confirm ID`). Tell them when one waits."
)

RECAP_DESCRIPTION = (
    "Read this thread's recap: a headline, a gist and the open tasks, kept by a cheap model "
    "from the thread's history. It is derived and may be stale; the pinned context (the "
    "`context` tool) is the record. Use it to see where the work stands when you come back."
)

PinKindName = Literal["objective", "decision", "constraint", "open-item", "next-action", "resolve"]


class AlpTools:
    """The tools' bodies over one `call` (method, params) → result; errors as ToolError."""

    def __init__(self, call: Call, thread_id: str | None) -> None:
        self._call = call
        self._thread_id = thread_id

    def _rpc(self, method: str, params: dict[str, Any]) -> Any:
        try:
            return self._call(method, params)
        except RpcError as exc:
            raise ToolError(f"{exc.name}: {exc.message}") from exc
        except (DaemonUnreachable, ForeignDaemon) as exc:
            raise ToolError(f"alpd is not reachable: {exc}") from exc

    def pin(self, kind: PinKindName, text: str) -> str:
        result = self._rpc("context/pin", {"kind": kind, "text": text})
        return (
            f"pinned {result['kind']}: {result['text']} "
            f"({result['pins']} pins in this run's checkpoint)"
        )

    def context(self) -> str:
        if not self._thread_id:
            raise ToolError(
                "THREAD_NOT_FOUND: this run belongs to no thread (ALP_THREAD_ID is not set)"
            )
        return render.context(self._rpc("thread/context", {"threadId": self._thread_id}))

    def recap(self) -> str:
        if not self._thread_id:
            raise ToolError(
                "THREAD_NOT_FOUND: this run belongs to no thread (ALP_THREAD_ID is not set)"
            )
        from alpctl.recap_render import recap_block

        result = self._rpc("thread/recap", {"threadId": self._thread_id})
        return "\n".join(recap_block(result))

    def search(self, query: str, limit: int = 10) -> str:
        params = {"query": query, "limit": max(1, min(limit, 50))}
        return render.search(self._rpc("history/search", params), params)

    def ps(self, all: bool = False) -> str:
        return background_render.ps(self._rpc("daemon/ps", {"all": all}))

    def delegate(self, agent: str, task: str) -> str:
        result = self._rpc("execution/delegate", {"agent": agent, "task": task})
        return render.execution(result["execution"])

    def handoff(
        self,
        target: str,
        summary: str,
        artifacts: list[str] | None = None,
        directive: bool = False,
    ) -> str:
        params = {
            "target": target,
            "summary": summary,
            "artifacts": [os.path.abspath(path) for path in artifacts or []],
            "directive": directive,
            "door": "mcp",
        }
        return handoff_render.sent(self._rpc("handoff/send", params))

    def inbox(self, all_threads: bool = False) -> str:
        params = {"thread": self._thread_id} if self._thread_id and not all_threads else {}
        return handoff_render.inbox(self._rpc("inbox/list", params))


def socket_call(socket_path: str) -> Call:
    def call(method: str, params: dict[str, Any]) -> Any:
        with Client.connect(socket_path) as client:
            return client.call(method, params)

    return call


def build_server(tools: AlpTools) -> StdioServer:
    server = StdioServer("alp", __version__, instructions=INSTRUCTIONS)
    server.add_tool(tools.pin, name="pin", description=PIN_DESCRIPTION)
    server.add_tool(tools.context, name="context", description=CONTEXT_DESCRIPTION)
    server.add_tool(tools.search, name="search", description=SEARCH_DESCRIPTION)
    server.add_tool(tools.ps, name="ps", description=PS_DESCRIPTION)
    server.add_tool(tools.delegate, name="delegate", description=DELEGATE_DESCRIPTION)
    server.add_tool(tools.handoff, name="handoff", description=HANDOFF_DESCRIPTION)
    server.add_tool(tools.inbox, name="inbox", description=INBOX_DESCRIPTION)
    server.add_tool(tools.recap, name="recap", description=RECAP_DESCRIPTION)
    return server


def serve(socket_path: str) -> None:
    """Serve MCP on stdin/stdout until the client closes them."""
    tools = AlpTools(socket_call(socket_path), os.environ.get("ALP_THREAD_ID") or None)
    build_server(tools).run()
