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


METHODS: dict[str, MethodSpec] = {
    "daemon/ping": MethodSpec(m.Empty, m.PingResult, "version, protocol and pid of the daemon"),
    "daemon/status": MethodSpec(m.Empty, m.StatusResult, "uptime, counts, paths, background tasks"),
    "thread/create": MethodSpec(m.ThreadCreateParams, m.Thread, "a new Thread; never reuses one"),
    "thread/list": MethodSpec(
        m.ThreadListParams, m.ThreadListResult, "threads of a workspace (default: the caller's)"
    ),
    "thread/close": MethodSpec(m.ThreadRef, m.Thread, "close a thread (no reopen)"),
    "thread/archive": MethodSpec(m.ThreadRef, m.Thread, "archive a closed thread"),
    "events/subscribe": MethodSpec(
        m.SubscribeParams, m.SubscribeResult, "server notifications on this connection"
    ),
}
