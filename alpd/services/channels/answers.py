"""What a chat is told when a root it started settles: the run's final reply.

Read from the history once the transcript is copied (the caller syncs first, as reports
do); secret-filtered like a report's message, and the output's last lines when the run left
no reply (`alpd.domain.conversation.reports.final_message`).
"""

from __future__ import annotations

from alpd.domain.conversation.reports import final_message
from alpd.services.context import Daemon
from alpd.store.conversation.reports import final_reply


async def final_text(d: Daemon, execution_id: str, output_tail: str | None) -> str:
    reply = await final_reply(d.store, execution_id)
    return final_message(reply, output_tail).text


__all__ = ["final_text"]
