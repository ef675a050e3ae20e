"""`thread/push`: a message from a script, an alert or a webhook into a thread, as a `push`
delivery (`alpd.services.conversation.delivery`: wake, inject or queue). Its `to` says where
the run's report goes besides the thread (`alpd.services.conversation.destinations`), carried
in the root's origin (`report_to`)."""

from __future__ import annotations

from alpd.domain.conversation.delivery import Source
from alpd.domain.runs.policy import Origin
from alpd.domain.secrets.filter import redact
from alpd.errors import InvalidArgument
from alpd.services.context import Caller
from alpd.services.conversation.delivery import DeliveryService, Submission
from alpd.services.conversation.destinations import resolve_destinations
from alpd.services.conversation.wake import require_thread_agent
from protocol import messages as m


async def push(service: DeliveryService, caller: Caller, params: m.PushParams) -> m.PushResult:
    """`thread/push`: a message from a script, an alert or a webhook, as a `push` delivery."""
    source = " ".join(redact(params.source).text.split())
    if not source:
        raise InvalidArgument("name who is pushing (`--from LABEL`)")
    if not params.text.strip():
        raise InvalidArgument("nothing to push: the text is empty")
    report_to = await resolve_destinations(service.d.store, caller, params.thread_id, params.to)
    guard = await service.push_guard(caller, params.thread_id) if service.push_guard else None
    if params.agent is None:
        await require_thread_agent(service.ex, params.thread_id, caller)
    submitted = await service.submit(
        Submission(
            thread_id=params.thread_id,
            kind="push",
            origin=Origin(
                door=params.door,
                by=guard.by if guard is not None else f"uid:{caller.uid}",
                push_source=source,
                report_to=report_to,
            ),
            source=Source(kind="push", label=source, at=service.d.clock.now_iso()),
            text=params.text,
            agent=params.agent,
            notify=params.notify,
            in_unit=guard.in_unit if guard is not None else None,
        ),
        requested_by=caller,
    )
    return m.PushResult(
        delivery_id=submitted.delivery_id,
        status=submitted.status,
        waiting=submitted.waiting,
        execution=submitted.execution,
    )


__all__ = ["push"]
