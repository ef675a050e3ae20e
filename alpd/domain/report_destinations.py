"""Where a report goes (pure): the `to` of a schedule or a push.

A report always stays in its own thread (`alp activity`, `thread show`): that is the record.
`to` says where it is *sent* besides:

- `chats` — every paired chat of every channel (what happens when `to` is unset);
- `telegram`, `wechat` — that channel's paired chats only;
- `thread:NAME` — another thread of the same person: the report is delivered there (the one
  delivery path: injected, queued or a push root) under a report envelope;
- `none` — nowhere else: no chat, no other thread (alone, or it is a contradiction).

Several may be named (`--to telegram --to thread:ops`), at most `MAX_DESTINATIONS`.
`parse` reads what a person typed; the service resolves each `thread:` name to an id, and the
result (`chats`, `telegram`, `wechat`, `none`, `thread:ID`) is what runs carry in their origin
(`report_to`) and the doors read (`chat_doors`, `threads`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

CHATS: Final = "chats"
NONE: Final = "none"
THREAD: Final = "thread:"
CHANNEL_NAMES: Final = ("telegram", "wechat")
MAX_DESTINATIONS: Final = 8
FORMS: Final = "chats, telegram, wechat, thread:NAME or none"


class BadDestination(ValueError):
    """A `to` a person must correct (the message says how)."""


def parse(values: Sequence[str]) -> list[tuple[str, str]]:
    """(kind, value) per destination, in order, duplicates dropped: kind is `chats`,
    `telegram`, `wechat`, `none` (value "") or `thread` (value: the thread's name as typed)."""
    if len(values) > MAX_DESTINATIONS:
        raise BadDestination(f"at most {MAX_DESTINATIONS} destinations (--to) for one report")
    out: list[tuple[str, str]] = []
    for raw in values:
        value = raw.strip()
        word = value.lower()
        if word.startswith(THREAD):
            name = value[len(THREAD) :].strip()
            if not name:
                raise BadDestination("thread: names a thread: --to thread:NAME (id, title, @last)")
            item = ("thread", name)
        elif word in (CHATS, NONE, *CHANNEL_NAMES):
            item = (word, "")
        else:
            raise BadDestination(f"unknown destination {value!r}: --to takes {FORMS}")
        if item not in out:
            out.append(item)
    if ("none", "") in out and len(out) > 1:
        raise BadDestination("--to none sends the report nowhere; it cannot be named with others")
    return out


def chat_doors(report_to: Iterable[str] | None, doors: Iterable[str]) -> list[str]:
    """Which of the running chat doors a notice goes to."""
    running = list(doors)
    if report_to is None:
        return running
    wanted = set(report_to)
    if CHATS in wanted:
        return running
    return [door for door in running if door in wanted]


def threads(report_to: Iterable[str] | None) -> list[str]:
    """The ids of the other threads a report is delivered to."""
    return [d[len(THREAD) :] for d in report_to or () if d.startswith(THREAD)]


__all__ = [
    "CHATS",
    "MAX_DESTINATIONS",
    "NONE",
    "BadDestination",
    "chat_doors",
    "parse",
    "threads",
]
