"""The configured chat channels, kept running, and what alpd sends them.

Each channel whose table is in config.toml runs in its own task (`_keep`): it reads its
secrets, runs, and when it fails is started again after a back-off — 1 s doubling to
`MAX_BACKOFF` on network errors (`backing-off`), `SLOW_RETRY` when another alpd holds the
bot (`refused`) or the credentials are wrong (`failing`); a run that stayed up a minute
resets the back-off. Its state is in `alp ps` and `daemon/status` (`task_states`) and in
`channel/list`.

What goes out, besides replies (`alpd.channels.chat`):
- `after_settle`: a root started from a chat (origin door = the channel) → its final reply
  to the sender's chat; a failed root of any door → a `failures` notice;
- `round_failed`: a round that could not open (no root: its runtime refused to start) → why,
  to the sender's chat when a chat started it, else a `failures` notice;
- `on_report` (reports of background work: scheduled, push, sub-agent) → a `reports` notice;
- `inbox/changed` (a directive handoff waiting) → Approve / Deny to every paired chat; (a
  run's memory proposal, `remember`) → Remember / Dismiss;
  `handoff/delivered` → a `handoffs` notice;
- `ask_permission` (a run's permission request, `alpd.services.channels.approvals`) →
  Approve / Deny to every paired chat of every running channel.
A notice goes to the chats its run's `report_to` names (a schedule's or a push's `to`:
alpd.domain.report_destinations; unset: every paired chat), and to none when its thread is
muted for its kind (`alpd.services.channels.mutes`). Notices pass the outbox
(`alpd.domain.channel_outbox`: kinds, quiet hours, coalescing, a rate per chat), drained
every `OUTBOX_SECONDS`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any, Final

import anyio
import msgspec
import structlog

from alpd.channels.chat import ChatDoor, ChatSession
from alpd.channels.door import Channel, ChannelBroken, ChannelDown, ChannelRefused
from alpd.domain.channel_outbox import Outbox
from alpd.domain.channel_settings import ChannelSettings
from alpd.domain.report_destinations import chat_doors
from alpd.domain.runs.policy import Origin
from alpd.errors import ChannelNotConfigured, ChannelUnavailable
from alpd.events import MAX_PENDING, Subscriber
from alpd.rpc.dispatch import Dispatcher
from alpd.services.channels.answers import final_text
from alpd.services.channels.approvals import Approvals, PermissionAsk
from alpd.services.channels.mutes import Mutes
from alpd.services.channels.pairing import Pairing
from alpd.services.context import Caller, Daemon
from protocol import messages as m

MAX_BACKOFF: Final = 60.0
SLOW_RETRY: Final = 60.0
STEADY_SECONDS: Final = 60.0
OUTBOX_SECONDS: Final = 1.0
CHANNELS: Final = ("telegram", "wechat")
#: the distribution that provides each module the chat doors import (the `channels` extra)
CHANNEL_DISTRIBUTIONS: Final = {
    "telegram": "python-telegram-bot",
    "httpx": "httpx",
    "cryptography": "cryptography",
}


def missing_dependency(channel: str, exc: ModuleNotFoundError) -> str:
    """What to say when a chat door's library is not installed: what, and how to install it."""
    module = (exc.name or "").split(".")[0]
    what = CHANNEL_DISTRIBUTIONS.get(module, module or "a library it needs")
    return (
        f"the {channel} door needs {what}, which is not installed: install alp with its "
        "channels extra, pip install 'alp[channels]', "
        "then restart alpd"
    )


log = structlog.get_logger("alpd.channels")

_notification = msgspec.json.Decoder(dict)


class Channels:
    def __init__(
        self,
        d: Daemon,
        dispatcher: Dispatcher,
        settings: Callable[[], ChannelSettings],
        sync: Callable[[str], Awaitable[object]],
    ) -> None:
        self.d = d
        self._dispatcher = dispatcher
        self._settings = settings
        self._sync = sync
        self.pairing = Pairing(d)
        self.approvals = Approvals(d)
        self.approvals.asker = self.ask_permission
        self.mutes = Mutes(d)
        self.doors: dict[str, ChatDoor] = {}
        self._state: dict[str, tuple[str, str | None]] = {}
        first = settings()
        self.outbox = Outbox(
            kinds=first.notify, per_minute=first.per_minute, quiet=first.quiet_hours
        )

    # lifecycle

    def configured(self, name: str) -> bool:
        return getattr(self._settings(), name, None) is not None

    async def run(self) -> None:
        """Every configured channel, the outbox and the event listener, until cancelled."""
        await self.pairing.load()
        names = [name for name in CHANNELS if self.configured(name)]
        if not names:
            return
        async with anyio.create_task_group() as tg:
            for name in names:
                self._state[name] = ("starting", None)
                tg.start_soon(self._keep, name)
            tg.start_soon(self._drain_outbox)
            tg.start_soon(self._listen)

    def _make(self, name: str) -> Channel:
        settings = self._settings()
        try:
            if name == "telegram" and settings.telegram is not None:
                from alpd.channels.secrets_file import read_secret
                from alpd.channels.telegram import TelegramChannel

                token = read_secret(settings.telegram.token_file, "ALP_TELEGRAM_TOKEN")
                return TelegramChannel(self.d, token, settings.telegram.api_url)
            if name == "wechat" and settings.wechat is not None:
                from alpd.channels.wecom import WecomChannel
                from alpd.services.channels.seen import SeenKeys

                return WecomChannel(settings.wechat, SeenKeys(self.d, "wechat"))
        except ModuleNotFoundError as exc:
            raise ChannelBroken(missing_dependency(name, exc)) from exc
        raise ChannelBroken(f"[channels.{name}] is not in config.toml")

    async def _keep(self, name: str) -> None:
        delay = 1.0
        while True:
            started = time.monotonic()
            channel: Channel | None = None
            try:
                channel = self._make(name)
                door = ChatDoor(
                    channel, self._dispatcher, self.pairing, self.approvals, self.d.owner
                )
                self.doors[name] = door

                def up(state: str, detail: str | None, name: str = name) -> None:
                    self._state[name] = (state, detail)

                await channel.run(door.screen, door.handle, up)
                wait, state, detail = delay, "backing-off", "stopped; starting again"
            except ChannelRefused as exc:
                wait, state, detail = SLOW_RETRY, "refused", str(exc)
            except ChannelBroken as exc:
                wait, state, detail = SLOW_RETRY, "failing", str(exc)
            except ChannelDown as exc:
                wait, state, detail = delay, "backing-off", str(exc)
            except Exception as exc:
                log.exception("channel_failed", channel=name)
                wait, state, detail = delay, "failing", type(exc).__name__
            finally:
                self.doors.pop(name, None)
                if channel is not None:
                    with anyio.CancelScope(shield=True):
                        await channel.close()
            if time.monotonic() - started > STEADY_SECONDS:
                delay = 1.0
            self._state[name] = (state, f"{detail} (again in {wait:.0f} s)")
            log.warning("channel_down", channel=name, state=state, detail=detail, retry=wait)
            await anyio.sleep(wait)
            delay = min(delay * 2, MAX_BACKOFF)

    # state

    def task_states(self) -> list[m.TaskState]:
        return [
            m.TaskState(
                name=f"channel-{name}",
                state=self._state.get(name, ("starting", None))[0],
                detail=self._state.get(name, (None, None))[1],
            )
            for name in CHANNELS
            if self.configured(name)
        ]

    async def states(self) -> list[m.ChannelState]:
        out = []
        for name in CHANNELS:
            state, detail = self._state.get(name, ("off", None))
            out.append(
                m.ChannelState(
                    channel=name,
                    configured=self.configured(name),
                    state=state if self.configured(name) else "off",
                    detail=detail if self.configured(name) else f"no [channels.{name}] table",
                    senders=await self.pairing.listed(name),
                    pairing_until=self.pairing.waiting_until(name),
                )
            )
        return out

    def pair(self, name: str) -> m.ChannelPairResult:
        if not self.configured(name):
            raise ChannelNotConfigured(
                f"no [channels.{name}] table in config.toml; docs/channels.md says how to "
                "make a bot and what to put there",
                channel=name,
            )
        if name not in self.doors:
            state, detail = self._state.get(name, ("starting", None))
            raise ChannelUnavailable(
                f"the {name} channel is {state}"
                + (f": {detail}" if detail else "")
                + "; `alp channel list` shows why",
                channel=name,
                state=state,
            )
        code = self.pairing.offer(name)
        return m.ChannelPairResult(
            channel=name,  # type: ignore[arg-type]
            code=code.code,
            expires_at=code.expires_at,
            instructions=f"send {code.code} to the bot from your own account within 10 minutes",
        )

    # outgoing

    async def ask_permission(self, ask: PermissionAsk) -> int:
        title = await self._title(ask.thread_id)
        asked = 0
        for door in list(self.doors.values()):
            asked += await door.ask_permission(ask, title)
        return asked

    async def after_settle(self, execution_id: str) -> None:
        if not self.doors:
            return
        execution: m.Execution = await self._owner_call("execution/show", executionId=execution_id)
        if execution.thread_id is None or execution.id != execution.root_id:
            return
        door = self.doors.get(execution.origin.door)
        if door is not None and execution.kind == "interactive":
            await self._sync(execution_id)
            text = await final_text(self.d, execution_id, execution.output_tail)
            sender = execution.origin.by.partition(":")[2]
            chats = [r.chat for r in await self.pairing.senders(door.name) if r.sender == sender]
            title = await self._title(execution.thread_id)
            mark = "✅" if execution.outcome == "completed" else f"⚠ {execution.outcome}"
            for chat in chats:
                await door.reply(chat, f"{mark} {title}\n\n{text}")
            return
        if execution.outcome not in ("completed", "cancelled") and execution.kind != "temp":
            await self._notice(
                execution.thread_id,
                "failures",
                f"⚠ {execution.kind} root {execution.outcome}",
                execution.origin.report_to,
            )

    async def round_failed(self, thread_id: str, origin: Origin, kind: str, why: str) -> None:
        if not self.doors:
            return
        title = await self._title(thread_id)
        door = self.doors.get(origin.door)
        if door is not None:
            sender = origin.by.partition(":")[2]
            for record in await self.pairing.senders(door.name):
                if record.sender == sender:
                    await door.reply(record.chat, f"⚠ {title}: not started\n\n{why}")
            return
        report_to = list(origin.report_to) if origin.report_to is not None else None
        await self._notice(thread_id, "failures", f"⚠ {kind} round not started: {why}", report_to)

    async def on_report(self, report: m.Report) -> None:
        kind = "reports" if report.outcome == "completed" else "failures"
        head = f"📋 {report.kind} run {report.outcome}"
        await self._notice(
            report.thread_id, kind, f"{head}\n{report.message}", report.origin.report_to
        )

    async def on_budget(self, warning: m.BudgetWarning) -> None:
        await self._notice(warning.thread_id, "budget", f"💸 {warning.message}")

    async def _notice(
        self, thread_id: str, kind: str, line: str, report_to: list[str] | None = None
    ) -> None:
        """A notice for every paired chat of the doors `report_to` names (None: all), unless
        the thread is muted for its kind."""
        if not self.doors or kind in await self.mutes.muted(thread_id):
            return
        title = await self._title(thread_id)
        for name in chat_doors(report_to, list(self.doors)):
            door = self.doors[name]
            for chat in await door.chats():
                self.outbox.post(f"{door.name}\0{chat}", thread_id, f"🔔 {title}", kind, line)

    async def _drain_outbox(self) -> None:
        while True:
            await anyio.sleep(OUTBOX_SECONDS)
            settings = self._settings()
            self.outbox.kinds = settings.notify
            self.outbox.per_minute = settings.per_minute
            self.outbox.quiet = settings.quiet_hours
            local = datetime.now().astimezone()
            for key, text in self.outbox.due(time.monotonic(), local.hour * 60 + local.minute):
                name, _, chat = key.partition("\0")
                door = self.doors.get(name)
                if door is None:
                    continue
                try:
                    await door.reply(chat, text)
                except ChannelDown as exc:
                    log.warning("channel_notice_failed", channel=name, error=str(exc))

    async def _listen(self) -> None:
        """inbox/changed and handoff/delivered, from the daemon's event bus."""
        send, receive = anyio.create_memory_object_stream[bytes](MAX_PENDING)
        subscriber = Subscriber(
            send, frozenset({"inbox/changed", "handoff/delivered"}), None, lambda: None
        )
        self.d.events.add(subscriber)
        try:
            async with receive:
                async for frame in receive:
                    try:
                        await self._event(_notification.decode(frame))
                    except Exception:
                        log.exception("channel_event_failed")
        finally:
            self.d.events.remove(subscriber)

    async def _event(self, frame: dict[str, object]) -> None:
        params = frame.get("params")
        if frame.get("method") == "inbox/changed":
            changed = msgspec.convert(params, m.InboxChanged)
            item = changed.item
            if changed.change == "added" and item is not None and item.directive:
                for door in list(self.doors.values()):
                    await door.ask_directive(item)
            elif changed.change == "added" and changed.proposal is not None:
                for door in list(self.doors.values()):
                    await door.ask_proposal(changed.proposal)
        elif frame.get("method") == "handoff/delivered":
            delivered = msgspec.convert(params, m.HandoffDelivered)
            item = delivered.handoff
            await self._notice(
                item.target_thread_id,
                "handoffs",
                f"📨 handoff from {item.source_title or item.source_thread_id}: {item.summary}",
            )

    async def _title(self, thread_id: str | None) -> str:
        if thread_id is None:
            return "?"
        try:
            shown: m.ThreadShowResult = await self._owner_call("thread/show", threadId=thread_id)
        except Exception:
            return thread_id
        return shown.thread.title or shown.thread.headline or thread_id

    async def _owner_call(self, method: str, **params: object) -> Any:
        """A read as the daemon's owner (the page's and the chats' way in)."""
        session = ChatSession(Caller(self.d.owner, os.getgid(), os.getpid()), "channels", "alpd")
        return await self._dispatcher.call(session, method, dict(params))


__all__ = ["CHANNELS", "Channels"]
