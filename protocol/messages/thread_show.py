"""`thread/show` and what it gathers (roots, context, history, reports, handoffs, steps,
recap); `thread/clear|undo`, `thread/recap` and `thread/reconcile`."""

from __future__ import annotations

from typing import Literal

import msgspec

from protocol.messages.base import DoorName, Revision, Wire
from protocol.messages.executions import ContextResult, Execution, Report
from protocol.messages.handoffs import Handoff
from protocol.messages.history import HistorySummary
from protocol.messages.threads import Thread


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
    #: delegated children (`sub-agent` runs) of the thread's roots
    children: int = 0
    #: the thread's `temp` executions (each refresh of its recap): neither roots nor children
    temp: int = 0
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


__all__ = [
    "ContextStep",
    "RecapState",
    "ReconcileResult",
    "ThreadRecap",
    "ThreadRecapParams",
    "ThreadShowParams",
    "ThreadShowResult",
    "ThreadStepParams",
    "ThreadStepResult",
]
