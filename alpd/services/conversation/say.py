"""`thread/say`: what a person typed at a chat door, as a turn of the thread.

Not a push: the kind is `interactive` (a person in any channel is interactive) and the
origin names the channel (`door`) and the sender (`by`: `telegram:12345`). It travels the
delivery paths a push does (`alpd.services.conversation.delivery`): a root of its own when
the thread is idle, else queued for the round after the running root, or injected into
it. Its envelope says it is the user's own turn (`alpd.domain.conversation.delivery`).
Only a door the person holds calls it: a run asking is NOT_FROM_A_RUN (rpc/handlers.py).
"""

from __future__ import annotations

from alpd.domain.conversation.delivery import Source
from alpd.domain.runs.policy import Origin
from alpd.errors import InvalidArgument
from alpd.services.context import Caller
from alpd.services.conversation.delivery import DeliveryService, Submission
from protocol import messages as m


async def say(
    service: DeliveryService, caller: Caller, params: m.SayParams, door: str, by: str
) -> m.SayResult:
    """`thread/say`: what a person typed at a chat door (`door`, the session's: `telegram`,
    `wechat`), as an `interactive` turn of the thread — a root of its own when the thread is
    idle, else queued for the round after the running root, or injected into it, exactly as
    a push would be (module docstring). `by` names the sender (`telegram:12345`)."""
    if not params.text.strip():
        raise InvalidArgument("nothing to say: the text is empty")
    submitted = await service.submit(
        Submission(
            thread_id=params.thread_id,
            kind="interactive",
            origin=Origin(door=door, by=by),
            source=Source(kind="chat", label=door, at=service.d.clock.now_iso()),
            text=params.text,
            sender_uid=caller.uid,
        ),
        requested_by=caller,
    )
    return m.SayResult(
        delivery_id=submitted.delivery_id,
        status=submitted.status,
        waiting=submitted.waiting,
        execution=submitted.execution,
    )


__all__ = ["say"]
