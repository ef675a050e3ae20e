"""Notifications to a chat that never flood it (pure: time is a parameter).

Rules, in the order they apply:
1. Only the kinds the person asked for (`[channels] notify`: reports, handoffs, failures,
   budget) are posted; the rest are dropped at `post`.
2. Coalesced per thread: what is posted for a thread while an earlier notice of it still
   waits joins that notice (one message, its lines in order), at most `LINES_PER_NOTICE`
   lines kept (then "+N more"); at most `THREADS_PER_CHAT` threads wait per chat (a new
   thread beyond that joins a catch-all notice).
3. Quiet hours (`[channels] quiet_hours`, local time): nothing is sent; notices keep
   coalescing and leave as soon as the quiet hours end.
4. Rate: at most `per_minute` messages a chat in any 60 s; what is over waits.
Answers to the person's own messages and approval prompts do not go through here: they are
replies, sent at once.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Final

from alpd.domain.channel_settings import in_quiet_hours

LINES_PER_NOTICE: Final = 10
THREADS_PER_CHAT: Final = 20
OTHER_THREADS: Final = "(other threads)"


@dataclass(slots=True)
class _Notice:
    title: str
    lines: list[str] = field(default_factory=list)
    dropped: int = 0

    def text(self) -> str:
        more = f"\n+{self.dropped} more" if self.dropped else ""
        return f"{self.title}\n" + "\n".join(self.lines) + more


@dataclass(slots=True)
class _Chat:
    waiting: OrderedDict[str, _Notice] = field(default_factory=OrderedDict)
    sent_at: deque[float] = field(default_factory=deque)


class Outbox:
    def __init__(
        self,
        *,
        kinds: tuple[str, ...],
        per_minute: int,
        quiet: tuple[int, int] | None,
    ) -> None:
        self.kinds = kinds
        self.per_minute = per_minute
        self.quiet = quiet
        self._chats: dict[str, _Chat] = {}

    def post(self, chat: str, thread: str, title: str, kind: str, line: str) -> bool:
        """Queue `line` about `thread` for `chat`; False when its kind is not wanted."""
        if kind not in self.kinds:
            return False
        box = self._chats.setdefault(chat, _Chat())
        if thread not in box.waiting and len(box.waiting) >= THREADS_PER_CHAT:
            thread, title = OTHER_THREADS, OTHER_THREADS
        notice = box.waiting.setdefault(thread, _Notice(title))
        if len(notice.lines) < LINES_PER_NOTICE:
            notice.lines.append(line)
        else:
            notice.dropped += 1
        return True

    def due(self, now: float, minute_of_day: int) -> list[tuple[str, str]]:
        """(chat, text) of the notices to send now, oldest first per chat."""
        if in_quiet_hours(self.quiet, minute_of_day):
            return []
        out: list[tuple[str, str]] = []
        for chat, box in self._chats.items():
            while box.sent_at and box.sent_at[0] <= now - 60.0:
                box.sent_at.popleft()
            while box.waiting and len(box.sent_at) < self.per_minute:
                _, notice = box.waiting.popitem(last=False)
                box.sent_at.append(now)
                out.append((chat, notice.text()))
        return out

    def waiting(self) -> int:
        return sum(len(box.waiting) for box in self._chats.values())


__all__ = ["LINES_PER_NOTICE", "THREADS_PER_CHAT", "Outbox"]
