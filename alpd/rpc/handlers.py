"""Binds every method of the wire contract to the service that does it."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

from alpd import __version__
from alpd.rpc.dispatch import Handler, Session
from alpd.services.threads import ThreadService
from protocol import messages as m

if TYPE_CHECKING:
    from alpd.daemon import Runtime


def build_handlers(rt: Runtime) -> dict[str, Handler]:
    threads = ThreadService(rt.daemon)

    async def ping(session: Session, params: m.Empty) -> m.PingResult:
        return m.PingResult(version=__version__, protocol=m.PROTOCOL_VERSION, pid=os.getpid())

    async def status(session: Session, params: m.Empty) -> m.StatusResult:
        store = rt.daemon.store
        row = await store.fetchone(
            "SELECT count(*) AS threads, coalesce(sum(status = 'open'), 0) AS open FROM threads "
            "WHERE owner_uid = ?",
            (session.caller.uid,),
        )
        counts = m.Counts(
            threads=row["threads"] if row else 0, open_threads=row["open"] if row else 0
        )
        return m.StatusResult(
            version=__version__,
            protocol=m.PROTOCOL_VERSION,
            pid=os.getpid(),
            uptime_seconds=round(time.monotonic() - rt.started, 3),
            home=str(rt.config.home),
            socket=str(rt.config.socket_path),
            database=str(store.path),
            connections=rt.connection_count,
            counts=counts,
            tasks=[],
        )

    async def create(session: Session, params: m.ThreadCreateParams) -> m.Thread:
        return await threads.create(session.caller, params)

    async def list_(session: Session, params: m.ThreadListParams) -> m.ThreadListResult:
        return await threads.list(session.caller, params)

    async def close(session: Session, params: m.ThreadRef) -> m.Thread:
        return await threads.close(session.caller, params)

    async def archive(session: Session, params: m.ThreadRef) -> m.Thread:
        return await threads.archive(session.caller, params)

    async def subscribe(session: Session, params: m.SubscribeParams) -> m.SubscribeResult:
        methods = frozenset(params.events) if params.events else None
        session.subscribe(methods, params.thread_id)
        return m.SubscribeResult(subscribed=sorted(methods or m.NOTIFICATIONS))

    table: dict[str, Any] = {
        "daemon/ping": ping,
        "daemon/status": status,
        "thread/create": create,
        "thread/list": list_,
        "thread/close": close,
        "thread/archive": archive,
        "events/subscribe": subscribe,
    }
    return table
