"""The one interface every chat channel implements, and what crosses it.

A channel knows its network and nothing of threads: it delivers each `Incoming` (a
message, or a button pressed) to the callback it is given, in the order the network gave
them, and sends, edits and acknowledges when asked. A third channel is one more module
with a class like `alpd.channels.telegram.TelegramChannel`.

Failures are of three kinds, so the manager knows what to do: `ChannelDown` (the network,
the service unavailable: retried with back-off), `ChannelRefused` (another poller holds
the same account: not raced, retried slowly), `ChannelBroken` (bad credentials or config:
retried slowly, shown until fixed).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Incoming:
    """A person's message or button press, as a channel numbers its people and chats."""

    sender: str
    chat: str
    #: what they typed (None for a button press)
    text: str | None = None
    #: the display name the channel gives (informative only; never used to decide)
    name: str | None = None
    #: a pressed button's data (what `Button.data` carried)
    button: str | None = None
    #: the channel's handle to acknowledge the press with
    button_ref: str | None = None


@dataclass(frozen=True, slots=True)
class Button:
    label: str
    #: at most 64 bytes (Telegram's callback_data limit)
    data: str


@dataclass(frozen=True, slots=True)
class Sent:
    """A message the channel sent, to edit later."""

    chat: str
    message: str


Received = Callable[[Incoming], Awaitable[None]]
#: whether an incoming is handled at all (a paired sender, or a pairing code): asked before
#: anything is stored for it, so strangers cost no write
Screen = Callable[[Incoming], bool]
#: the channel tells its state (`polling`, `serving` …) and a detail once it is up
Up = Callable[[str, str | None], None]


class ChannelDown(Exception):
    """The network or the service failed; try again after a while."""


class ChannelRefused(Exception):
    """Another process polls the same account; this one stays off rather than race it."""


class ChannelBroken(Exception):
    """Credentials or configuration are wrong; nothing works until a person fixes them."""


class Channel(Protocol):
    #: the door named in origins (`telegram`, `wechat`)
    name: str
    #: how many characters one message may hold
    text_limit: int

    async def run(self, screen: Screen, received: Received, up: Up) -> None:
        """Receive until cancelled, handing what `screen` admits to `received`, in order;
        raise one of the errors above when it cannot."""

    async def send(self, chat: str, text: str, buttons: Sequence[Button] = ()) -> Sent: ...

    async def edit(self, sent: Sent, text: str) -> None: ...

    async def acknowledge(self, incoming: Incoming, text: str) -> None:
        """Tell the person their button press was taken (a toast), where the channel can."""

    async def close(self) -> None: ...


__all__ = [
    "Button",
    "Channel",
    "ChannelBroken",
    "ChannelDown",
    "ChannelRefused",
    "Incoming",
    "Received",
    "Screen",
    "Sent",
    "Up",
]
