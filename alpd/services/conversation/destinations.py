"""A schedule's or a push's `to`, resolved for the caller (alpd.domain.report_destinations):
each `thread:NAME` becomes `thread:ID` of an open thread of theirs that is not the report's
own (which keeps its report anyway)."""

from __future__ import annotations

from collections.abc import Sequence

from alpd.domain import report_destinations as dest
from alpd.errors import InvalidArgument, ThreadClosed
from alpd.services.context import Caller
from alpd.services.threads.lifecycle import check_owner
from alpd.services.threads.refs import resolve_thread
from alpd.store.db import Store


async def resolve_destinations(
    store: Store, caller: Caller, own_thread: str, values: Sequence[str] | None
) -> tuple[str, ...] | None:
    """None when `values` is (every paired chat, the default)."""
    if values is None:
        return None
    try:
        parsed = dest.parse(values)
    except dest.BadDestination as exc:
        raise InvalidArgument(str(exc), field="to") from None
    out: list[str] = []
    for kind, name in parsed:
        if kind != "thread":
            out.append(kind)
            continue
        thread = await resolve_thread(store, caller, name)
        check_owner(thread, caller)
        if thread.id == own_thread:
            raise InvalidArgument(
                f"--to thread:{name} is the report's own thread, which keeps it anyway; "
                "name another thread, a chat or none",
                field="to",
            )
        if thread.status != "open":
            raise ThreadClosed(
                f"thread {thread.id} is {thread.status}: a report cannot be delivered there",
                threadId=thread.id,
            )
        out.append(f"{dest.THREAD}{thread.id}")
    return tuple(dict.fromkeys(out))


__all__ = ["resolve_destinations"]
