"""What every chat channel shares: who may speak, what a message does, what comes back.

Incoming, in order (`screen`, then `handle`):
1. A sender not on the allow-list is not handled: only a message carrying a live pairing
   code (`alp channel pair`) binds them (`alpd.services.channels.pairing`); everything else
   from them is dropped and logged, at most one log line a minute per channel.
2. A button press from the paired sender: an approval nonce (`a:NONCE` approve, `d:NONCE`
   deny) is spent once and answers its permission request or inbox item (confirm/dismiss as
   the owner, through the dispatcher); `t:THREAD` picks the chat's thread. Typed text never
   approves anything.
3. A command (`/threads`, `/use NAME`, `/search WORDS`, `/ps`, `/recap`, `/stop`, `/clear`,
   `/undo`, `/mute`, `/unmute`, `/inbox`, `/more`, `/help`).
4. Any other text is a turn of the chat's thread: `thread/say` (kind `interactive`, origin
   door = the channel), which wakes, queues or injects as a push would.

Every call goes through the dispatcher as the daemon's owner with the channel as its door,
so the same ownership checks and named errors apply as at the socket; an error is shown to
the person as its message.

Outgoing: the answer of a root started from the chat (its final text, cut at the channel's
limit; `/more` sends the rest), reports of background work and handoffs into threads
(`alpd.channels.outbox`: per kind, quiet hours, coalesced, rate-limited), and approval
prompts with Approve / Deny buttons.
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Final

import structlog

from alpd.channels.door import Button, Channel, ChannelDown, Incoming
from alpd.errors import AlpError
from alpd.rpc.dispatch import Dispatcher
from alpd.services.channels.approvals import Approvals, PermissionAsk
from alpd.services.channels.pairing import Pairing
from alpd.services.context import Caller
from alpd.services.memory.proposals import is_proposal
from protocol import messages as m

#: how many threads `/threads` lists and how many hits `/search` shows
LIST_LIMIT: Final = 8
#: chats whose unread rest of an answer is kept for `/more` (the oldest goes)
MORE_CHATS: Final = 64
STRANGER_LOG_SECONDS: Final = 60.0

log = structlog.get_logger("alpd.channels")

HELP: Final = (
    "alp: what you type goes to the chat's thread.\n"
    "/threads — recent threads (tap one)\n/use NAME — a thread by title, id or @last\n"
    "/search WORDS — search your history\n/ps — what runs\n/recap — the thread's recap\n"
    "/stop — stop its running root\n/clear, /undo — as alp thread clear/undo\n"
    "/mute, /unmute — the thread's notices (reports, handoffs, failures)\n"
    "/inbox — handoffs and memory proposals waiting for you\n/more — the rest of a long answer"
)


@dataclass(slots=True)
class ChatSession:
    """A Session (alpd.rpc.dispatch) for one chat sender, acting as the daemon's owner."""

    caller: Caller
    door: str
    #: who the origin names (`telegram:12345`)
    speaker: str

    def subscribe(self, methods: frozenset[str] | None, thread_id: str | None) -> None:
        raise NotImplementedError("a chat door does not subscribe through the dispatcher")


def cut(text: str, limit: int) -> tuple[str, str]:
    """(what fits in one message, the rest), cut at a line or word end where there is one."""
    if len(text) <= limit:
        return text, ""
    head = text[:limit]
    for mark in ("\n", " "):
        at = head.rfind(mark)
        if at > limit // 2:
            head = head[:at]
            break
    return head, text[len(head) :].lstrip()


class ChatDoor:
    def __init__(
        self, channel: Channel, dispatcher: Dispatcher, pairing: Pairing, approvals: Approvals,
        uid: int,
    ) -> None:  # fmt: skip
        self.channel = channel
        self.name = channel.name
        self._dispatcher = dispatcher
        self.pairing = pairing
        self.approvals = approvals
        self._uid = uid
        self._more: OrderedDict[str, str] = OrderedDict()
        self._last_stranger_log = 0.0
        self.strangers = 0
        self.handled = 0

    # incoming

    def screen(self, incoming: Incoming) -> bool:
        if self.pairing.allowed(self.name, incoming.sender):
            return True
        if incoming.text and self.pairing.redeemable(self.name, incoming.text) is not None:
            return True
        self.strangers += 1
        now = time.monotonic()
        if now - self._last_stranger_log >= STRANGER_LOG_SECONDS:
            self._last_stranger_log = now
            log.warning(
                "channel_stranger_ignored", channel=self.name, sender=incoming.sender,
                ignored_so_far=self.strangers,
            )  # fmt: skip
        return False

    async def handle(self, incoming: Incoming) -> None:
        self.handled += 1
        if not self.pairing.allowed(self.name, incoming.sender):
            await self._pair(incoming)
            return
        try:
            if incoming.button is not None:
                await self._pressed(incoming)
            elif incoming.text and incoming.text.startswith("/"):
                await self._command(incoming, incoming.text)
            elif incoming.text and incoming.text.strip():
                await self._say(incoming, incoming.text)
        except AlpError as exc:
            await self.reply(incoming.chat, f"⚠ {exc.message}")
        except ChannelDown:
            raise
        except Exception:
            log.exception("channel_message_failed", channel=self.name)
            await self.reply(incoming.chat, "⚠ alp could not handle that (see alpd's log)")

    async def _pair(self, incoming: Incoming) -> None:
        code = self.pairing.redeemable(self.name, incoming.text or "")
        if code is None:
            return
        await self.pairing.redeem(
            self.name, code, sender=incoming.sender, chat=incoming.chat, name=incoming.name
        )
        log.info("channel_paired", channel=self.name, sender=incoming.sender)
        await self.reply(incoming.chat, "✅ Paired with alp. " + HELP)

    def _session(self, sender: str) -> ChatSession:
        caller = Caller(uid=self._uid, gid=os.getgid(), pid=os.getpid())
        return ChatSession(caller, self.name, f"{self.name}:{sender}")

    async def call(self, sender: str, method: str, **params: Any) -> Any:
        wire = {_camel(k): v for k, v in params.items() if v is not None}
        return await self._dispatcher.call(self._session(sender), method, wire)

    async def thread_of(self, chat: str) -> str | None:
        return await self.pairing.chat_thread(self.name, chat)

    async def _say(self, incoming: Incoming, text: str) -> None:
        thread_id = await self.thread_of(incoming.chat)
        if thread_id is None:
            await self.reply(incoming.chat, "Pick a thread first: /threads or /use NAME")
            return
        said: m.SayResult = await self.call(
            incoming.sender, "thread/say", thread_id=thread_id, text=text
        )
        if said.status == "queued":
            await self.reply(
                incoming.chat, f"⏳ queued: a root is running ({said.waiting} waiting)"
            )
        elif said.status == "injecting":
            await self.reply(incoming.chat, "↪ passed to the running root")

    # commands

    async def _command(self, incoming: Incoming, text: str) -> None:
        word, _, rest = text.partition(" ")
        command = word[1:].split("@", 1)[0].lower()
        rest = rest.strip()
        chat, sender = incoming.chat, incoming.sender
        if command in ("help", "start"):
            await self.reply(chat, HELP)
        elif command == "threads":
            await self._threads(sender, chat)
        elif command == "use":
            await self._use(sender, chat, rest or "@last")
        elif command == "search":
            await self._search(sender, chat, rest)
        elif command == "ps":
            await self._ps(sender, chat)
        elif command == "more":
            await self._send_more(chat)
        elif command == "inbox":
            await self._inbox(sender, chat)
        elif command in ("recap", "stop", "clear", "undo", "mute", "unmute"):
            thread_id = await self.thread_of(chat)
            if thread_id is None:
                await self.reply(chat, "Pick a thread first: /threads or /use NAME")
                return
            await getattr(self, f"_{command}")(sender, chat, thread_id)
        else:
            await self.reply(chat, f"Unknown command /{command}. /help lists them.")

    async def _recent(self, sender: str) -> list[m.Thread]:
        listed: m.ThreadListResult = await self.call(sender, "thread/list", all=True, limit=200)
        open_ = [t for t in listed.threads if t.status == "open"]
        return sorted(open_, key=lambda t: t.updated_at, reverse=True)

    async def _threads(self, sender: str, chat: str) -> None:
        threads = (await self._recent(sender))[:LIST_LIMIT]
        if not threads:
            await self.reply(chat, "No open threads. Start one at a terminal (alp new).")
            return
        current = await self.thread_of(chat)
        lines = [f"{'▶ ' if t.id == current else ''}{_title(t)} ({t.id[:10]})" for t in threads]
        buttons = [Button(_title(t)[:30], f"t:{t.id}") for t in threads[:4]]
        await self.channel.send(chat, "Recent threads:\n" + "\n".join(lines), buttons)

    async def _use(self, sender: str, chat: str, name: str) -> None:
        if name == "@last":
            recent = await self._recent(sender)
            if not recent:
                await self.reply(chat, "No open threads yet.")
                return
            thread = recent[0]
        else:
            shown: m.ThreadShowResult = await self.call(sender, "thread/show", thread_id=name)
            thread = shown.thread
        await self.pairing.set_chat_thread(self.name, chat, thread.id)
        await self.reply(chat, f"▶ {_title(thread)} — what you type now goes to this thread.")

    async def _search(self, sender: str, chat: str, words: str) -> None:
        if not words:
            await self.reply(chat, "/search WORDS")
            return
        found: m.HistorySearchResult = await self.call(
            sender, "history/search", query=words, limit=LIST_LIMIT
        )
        if not found.hits:
            await self.reply(chat, f"Nothing found for {words!r}.")
            return
        lines = [
            f"• {h.thread_title or h.thread_id or '?'}: {' '.join(h.snippet.split())[:160]}"
            for h in found.hits
        ]
        await self.reply(chat, "\n".join(lines))

    async def _ps(self, sender: str, chat: str) -> None:
        ps: m.PsResult = await self.call(sender, "daemon/ps")
        lines = [
            f"▶ {j.thread_title or j.thread_id or '?'} · {j.kind} · {j.agent} · "
            f"{j.elapsed_seconds:.0f}s" + (f" · ${j.cost_usd:.2f}" if j.cost_usd else "")
            for j in ps.jobs
        ]
        lines += [f"⏳ {q.thread_title or q.thread_id}: {q.source}" for q in ps.queued[:5]]
        await self.reply(chat, "\n".join(lines) or "Nothing is running.")

    async def _recap(self, sender: str, chat: str, thread_id: str) -> None:
        recap: m.ThreadRecap = await self.call(sender, "thread/recap", thread_id=thread_id)
        if recap.headline is None:
            await self.reply(chat, "No recap yet for this thread.")
            return
        tasks = "".join(f"\n• {task}" for task in recap.open_tasks)
        await self.reply(chat, f"{recap.headline}\n\n{recap.gist or ''}{tasks}")

    async def _stop(self, sender: str, chat: str, thread_id: str) -> None:
        shown: m.ThreadShowResult = await self.call(sender, "thread/show", thread_id=thread_id)
        busy = shown.thread.busy_root
        if busy is None:
            await self.reply(chat, "Nothing is running in this thread.")
            return
        await self.call(sender, "execution/cancel", execution_id=busy)
        await self.reply(chat, f"⏹ stopped {busy}")

    async def _clear(self, sender: str, chat: str, thread_id: str) -> None:
        await self.call(sender, "thread/clear", thread_id=thread_id)
        await self.reply(chat, "🧹 cleared: the next root starts from an empty context")

    async def _undo(self, sender: str, chat: str, thread_id: str) -> None:
        await self.call(sender, "thread/undo", thread_id=thread_id)
        await self.reply(chat, "↩ undone: the last root's contribution is taken back")

    async def _mute(self, sender: str, chat: str, thread_id: str) -> None:
        await self.call(sender, "channel/mute", thread_id=thread_id)
        await self.reply(chat, "🔕 muted: no notices of this thread (/unmute to hear them)")

    async def _unmute(self, sender: str, chat: str, thread_id: str) -> None:
        await self.call(sender, "channel/unmute", thread_id=thread_id)
        await self.reply(chat, "🔔 unmuted: this thread's notices come again")

    async def _inbox(self, sender: str, chat: str) -> None:
        inbox: m.InboxListResult = await self.call(sender, "inbox/list")
        if not inbox.items and not inbox.proposals:
            await self.reply(chat, "Your inbox is empty.")
        for item in inbox.items[:LIST_LIMIT]:
            await self.ask_directive(item, chats=[chat])
        for proposal in inbox.proposals[:LIST_LIMIT]:
            await self.ask_proposal(proposal, chats=[chat])

    # buttons

    async def _pressed(self, incoming: Incoming) -> None:
        data = incoming.button or ""
        kind, _, value = data.partition(":")
        if kind == "t":
            await self.channel.acknowledge(incoming, "thread picked")
            await self._use(incoming.sender, incoming.chat, value)
            return
        if kind not in ("a", "d"):
            await self.channel.acknowledge(incoming, "unknown button")
            return
        approve = kind == "a"
        prompt = await self.approvals.answer(value, "approve" if approve else "deny")
        if prompt is None:
            await self.channel.acknowledge(incoming, "already answered or expired")
            return
        by = f"{self.name}:{incoming.sender}"
        if prompt.subject == "permission":
            taken = self.approvals.decide(prompt.subject_id, "allow" if approve else "deny", by)
            verdict = ("approved" if approve else "denied") if taken else "expired"
        else:
            # the inbox's two kinds of item: a directive handoff, a run's memory proposal
            proposal = is_proposal(prompt.subject_id)
            dismiss = "memory/dismiss" if proposal else "inbox/dismiss"
            await self.call(
                incoming.sender, "inbox/confirm" if approve else dismiss, id=prompt.subject_id
            )
            verdict = ("remembered" if proposal else "confirmed") if approve else "dismissed"
        await self.channel.acknowledge(incoming, verdict)
        if prompt.message is not None:
            from alpd.channels.door import Sent

            await self.channel.edit(Sent(prompt.chat, prompt.message), f"{verdict} · {by}")

    # outgoing

    async def reply(self, chat: str, text: str) -> None:
        head, rest = cut(text, self.channel.text_limit)
        if rest:
            self._more[chat] = rest
            self._more.move_to_end(chat)
            while len(self._more) > MORE_CHATS:
                self._more.popitem(last=False)
            head += "\n… /more"
        await self.channel.send(chat, head)

    async def _send_more(self, chat: str) -> None:
        rest = self._more.pop(chat, None)
        await self.reply(chat, rest or "Nothing more.")

    async def chats(self) -> list[str]:
        return [r.chat for r in await self.pairing.senders(self.name)]

    async def ask_permission(self, ask: PermissionAsk, title: str | None) -> int:
        text = (
            f"🔐 {title or ask.thread_id or 'a run'} asks permission\n{ask.summary}\n"
            f"(no answer in {ask.timeout:g} s is a deny)"
        )
        return await self._ask(text, "permission", ask.request_id, await self.chats())

    async def ask_directive(self, item: m.Handoff, chats: list[str] | None = None) -> int:
        text = (
            f"📥 directive from {item.source_title or item.source_thread_id} → "
            f"{item.target_title or item.target_thread_id}\n{item.summary}"
        )
        return await self._ask(text, "inbox", item.id, chats or await self.chats())

    async def ask_proposal(self, proposal: m.MemoryProposal, chats: list[str] | None = None) -> int:
        """A run's `remember`: Remember (`inbox/confirm`) or Dismiss (`memory/dismiss`)."""
        text = (
            f"🧠 remember? ({proposal.kind}, {proposal.scope}) — proposed by {proposal.origin}"
            f"\n{proposal.text}"
        )
        chats = chats or await self.chats()
        return await self._ask(text, "inbox", proposal.id, chats, ("Remember", "Dismiss"))

    async def _ask(
        self, text: str, subject: str, subject_id: str, chats: list[str],
        labels: tuple[str, str] = ("Approve", "Deny"),
    ) -> int:  # fmt: skip
        asked = 0
        for chat in chats:
            nonce = await self.approvals.new_prompt(self.name, chat, subject, subject_id)  # type: ignore[arg-type]
            buttons = (Button(labels[0], f"a:{nonce}"), Button(labels[1], f"d:{nonce}"))
            head, _ = cut(text, self.channel.text_limit)
            try:
                sent = await self.channel.send(chat, head, buttons)
            except ChannelDown as exc:
                log.warning("channel_ask_failed", channel=self.name, error=str(exc))
                continue
            await self.approvals.sent(nonce, sent.message)
            asked += 1
        return asked


def _title(thread: m.Thread) -> str:
    return thread.title or thread.headline or thread.id


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


__all__ = ["HELP", "ChatDoor", "ChatSession", "cut"]
