"""`thread/push`, and `delivery/pending|ack` (what a running root's hook takes mid-run)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from protocol.messages.base import PUSH_MAX_BYTES, Wire, byte_capped
from protocol.messages.executions import Execution

#: `started`: an idle thread was woken; `injecting`: its running root takes it mid-work (its
#: runtime's hook), or the next round if the run ends first; `queued`: it waits for the
#: running root to settle; `coalesced`: the same waiting delivery was already queued
DeliveryStatus = Literal["started", "injecting", "queued", "coalesced"]

#: where the reports of a schedule's or a push's runs go, besides their own thread (which
#: always keeps them): `chats` (every paired chat: the default), `telegram` or `wechat` (that
#: channel's paired chats), `thread:NAME` (another thread of yours: delivered there under a
#: report envelope), or `none` (no chat, no other thread) — docs/channels.md, "Where reports go"
Destination = Annotated[str, msgspec.Meta(min_length=1, max_length=300)]
Destinations = Annotated[list[Destination], msgspec.Meta(min_length=1, max_length=8)]


class PushParams(Wire):
    thread_id: str
    #: the message; the run receives it under a one-line envelope naming `source`
    text: Annotated[str, byte_capped(PUSH_MAX_BYTES, "the message")]
    #: who is pushing, a human label (`ci`, `disk-alert`, `webhook:github`)
    source: str
    #: the agent to run (default: the agent of the thread's last root)
    agent: str | None = None
    #: announce the run's report (`thread/report`, a desktop notification)
    notify: bool = False
    door: str = "cli"
    #: where the run's report goes besides this thread (unset: every paired chat)
    to: Destinations | None = None


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


class HoldParams(Wire):
    #: true: don't interrupt this run — what arrives for it waits for the next round; false:
    #: take deliveries mid-run again
    hold: bool = True


class HoldResult(Wire):
    #: the calling run
    execution_id: str
    held: bool
    #: deliveries of its thread waiting now
    waiting: int


__all__ = [
    "AckIds",
    "AckParams",
    "AckResult",
    "DeliveryStatus",
    "Destination",
    "Destinations",
    "HoldParams",
    "HoldResult",
    "PendingDelivery",
    "PendingParams",
    "PendingResult",
    "PushParams",
    "PushResult",
]
