"""`channel/list|pair|unpair` (the chat doors and who may speak through them),
`thread/say` (a person's turn typed at a door that is not a terminal) and
`approval/request` (a run asks the person, away from the desk, for a permission)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from protocol.messages.base import PUSH_MAX_BYTES, Timeout, Wire, byte_capped
from protocol.messages.delivery import DeliveryStatus
from protocol.messages.executions import Execution

ChannelName = Literal["telegram", "wechat"]
#: a sender as its channel numbers it (Telegram's user id, WeCom's UserID)
SenderId = Annotated[str, msgspec.Meta(min_length=1, max_length=128)]


class ChannelSender(Wire):
    """A person allowed to speak through a channel, bound to this alpd's owner."""

    channel: ChannelName
    sender: str
    paired_at: str
    #: the name the channel showed when they paired (informative only)
    name: str | None = None


class ChannelState(Wire):
    channel: ChannelName
    #: config.toml has the channel's table and its secrets are readable
    configured: bool
    #: `off` (not configured), `starting`, `polling` / `serving`, `backing-off` (network
    #: errors: retried), `refused` (another alpd holds this bot token), `failing`
    state: str
    detail: str | None = None
    senders: list[ChannelSender] = msgspec.field(default_factory=list)
    #: a pairing code is waiting to be sent to the bot until then
    pairing_until: str | None = None


class ChannelListParams(Wire):
    pass


class ChannelListResult(Wire):
    channels: list[ChannelState]
    #: threads whose notices (some kinds) no chat is sent (`alp channel mute`)
    muted: list[ThreadMute] = msgspec.field(default_factory=list)


class ChannelPairParams(Wire):
    channel: ChannelName


class ChannelPairResult(Wire):
    channel: ChannelName
    #: the one-time code to send to the bot (as the chat's first message)
    code: str
    expires_at: str
    #: what to do with it, in one sentence
    instructions: str


class ChannelUnpairParams(Wire):
    channel: ChannelName
    sender: SenderId


class ChannelUnpairResult(Wire):
    channel: ChannelName
    sender: str
    removed: bool


#: the notice kinds a thread can be muted for (`[channels] notify` names the same)
NoticeKind = Literal["reports", "handoffs", "failures", "budget"]


class ChannelMuteParams(Wire):
    thread_id: str
    #: which notices (default: all four)
    kinds: list[NoticeKind] | None = None


class ThreadMute(Wire):
    thread_id: str
    #: the notice kinds no chat is sent for this thread
    kinds: list[NoticeKind]
    thread_title: str | None = None


class SayParams(Wire):
    thread_id: str
    #: what the person typed: it becomes an `interactive` turn of the thread
    text: Annotated[str, byte_capped(PUSH_MAX_BYTES, "the message")]


class SayResult(Wire):
    delivery_id: int
    status: DeliveryStatus
    waiting: int
    execution: Execution | None = None


class ApprovalParams(Wire):
    """What a run asks permission for (Claude Code's permission prompt tool sends these)."""

    tool_name: Annotated[str, msgspec.Meta(max_length=256)]
    input: dict[str, Any] = msgspec.field(default_factory=dict)
    tool_use_id: str | None = None
    #: how long to wait for the person (default: `[channels] approval_timeout`, and never
    #: longer); no answer by then is a deny
    timeout: Timeout | None = None


class ApprovalResult(Wire):
    decision: Literal["allow", "deny"]
    #: why, in words the run reads (`denied from telegram`, `no answer in 300 s`)
    reason: str
    #: who decided (`telegram:12345`), absent when nobody did
    by: str | None = None


__all__ = [
    "ApprovalParams",
    "ApprovalResult",
    "ChannelListParams",
    "ChannelListResult",
    "ChannelMuteParams",
    "ChannelName",
    "ChannelPairParams",
    "ChannelPairResult",
    "ChannelSender",
    "ChannelState",
    "ChannelUnpairParams",
    "ChannelUnpairResult",
    "NoticeKind",
    "SayParams",
    "SayResult",
    "ThreadMute",
]
