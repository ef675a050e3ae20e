"""Handoffs (`handoff/send`, `handoff/delivered`) and the inbox of directives
(`inbox/list|confirm|dismiss`, `inbox/changed`)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from protocol.messages.base import HANDOFF_SUMMARY_MAX_BYTES, AbsolutePath, Wire, byte_capped
from protocol.messages.executions import Execution
from protocol.messages.memory import Memory, MemoryProposal

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


#: a handoff's summary: what a person would paste; over 4 KiB it is HANDOFF_TOO_LARGE (the
#: frame bound is far above, so the size can be reported, never cut)
Summary = Annotated[
    str,
    msgspec.Meta(max_length=256 * 1024),
    byte_capped(
        HANDOFF_SUMMARY_MAX_BYTES, "what was found and why it matters", "HANDOFF_TOO_LARGE"
    ),
]
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


class InboxListParams(Wire):
    #: one thread's (id or title); default: every thread of the caller
    thread: str | None = None


class InboxListResult(Wire):
    items: list[Handoff]
    #: the inbox's second kind of item: memories runs proposed (`remember`), oldest first
    proposals: list[MemoryProposal] = msgspec.field(default_factory=list)


class InboxItemRef(Wire):
    id: str


class InboxConfirmResult(Wire):
    #: the confirmed handoff (absent when the item was a memory proposal)
    item: Handoff | None = None
    execution: Execution | None = None
    #: the confirmed proposal and the memory it became
    proposal: MemoryProposal | None = None
    memory: Memory | None = None


class InboxChanged(Wire):
    """`inbox/changed`: an item arrived, or the person confirmed or dismissed one."""

    change: Literal["added", "confirmed", "dismissed"]
    #: the handoff (absent when the item is a memory proposal)
    item: Handoff | None = None
    proposal: MemoryProposal | None = None


__all__ = [
    "Artifact",
    "ArtifactPaths",
    "Handoff",
    "HandoffDelivered",
    "HandoffPath",
    "HandoffSendParams",
    "HandoffSendResult",
    "HandoffStatus",
    "InboxChanged",
    "InboxConfirmResult",
    "InboxItemRef",
    "InboxListParams",
    "InboxListResult",
    "Summary",
]
