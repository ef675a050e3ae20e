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
