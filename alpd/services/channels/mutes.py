"""Threads muted for notices: `alp channel mute THREAD [--kind K]…` (and `/mute` in a chat).

A mute is per thread and per kind (`reports`, `handoffs`, `failures`, `budget`: the kinds of
`[channels] notify`): no chat is sent that thread's notices of those kinds, whatever a
schedule's or a push's `to` says. Only notices are muted: the answer to what the person typed,
approval prompts and memory proposals still come (a muted permission request would be a deny
by timeout the person never saw). Muting is the person's (NOT_FROM_A_RUN: a run could
otherwise hide its own failures); a chat may mute, which only quiets it. The thread is named
as anywhere (id, prefix, title, `@last`) and must be the caller's.
"""

from __future__ import annotations

from typing import Final

from alpd.domain.channel_settings import NOTIFY_KINDS
from alpd.services.context import Caller, Daemon
from alpd.services.threads.lifecycle import check_owner
from alpd.services.threads.refs import resolve_thread
from alpd.store import channels as store
from alpd.store.db import Tx
from protocol import messages as m

#: muted threads `channel/list` shows at most
LISTED_MAX: Final = 200


class Mutes:
    def __init__(self, d: Daemon) -> None:
        self.d = d

    async def _change(self, caller: Caller, params: m.ChannelMuteParams, on: bool) -> m.ThreadMute:
        thread = await resolve_thread(self.d.store, caller, params.thread_id)
        check_owner(thread, caller)
        kinds = tuple(dict.fromkeys(params.kinds or NOTIFY_KINDS))
        at = self.d.clock.now_iso()

        async def unit(tx: Tx) -> None:
            if on:
                await store.mute_thread(tx, thread.id, kinds, at)
            else:
                await store.unmute_thread(tx, thread.id, kinds)

        await self.d.store.write(unit)
        muted = await store.muted_kinds(self.d.store, thread.id)
        return m.ThreadMute(thread_id=thread.id, kinds=list(muted), thread_title=thread.title)  # type: ignore[arg-type]

    async def mute(self, caller: Caller, params: m.ChannelMuteParams) -> m.ThreadMute:
        return await self._change(caller, params, True)

    async def unmute(self, caller: Caller, params: m.ChannelMuteParams) -> m.ThreadMute:
        return await self._change(caller, params, False)

    async def muted(self, thread_id: str) -> tuple[str, ...]:
        return await store.muted_kinds(self.d.store, thread_id)

    async def listed(self, caller: Caller) -> list[m.ThreadMute]:
        rows = await store.mutes(self.d.store, caller.uid, LISTED_MAX)
        return [
            m.ThreadMute(thread_id=r.thread_id, kinds=list(r.kinds), thread_title=r.thread_title)  # type: ignore[arg-type]
            for r in rows
        ]


__all__ = ["Mutes"]
