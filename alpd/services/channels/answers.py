"""What a chat is told when a root it started settles: the run's final reply.

Read from the history once the transcript is copied (the caller syncs first, as reports
do), whole — the chat door cuts it into messages and `/more` sends the rest — up to
`ANSWER_MAX_CHARS` (then its head, and where the rest is), secret-filtered. When the run left
no reply: the output's last lines, as its report has them
(`alpd.domain.conversation.reports.final_message`). A report's message is cut to its tail
(`MESSAGE_MAX_CHARS`), which is right for a notice but would leave `/more` nothing to send.
"""

from __future__ import annotations

from typing import Final

from alpd.domain.conversation.reports import final_message
from alpd.domain.secrets.filter import redact
from alpd.services.context import Daemon
from alpd.store.conversation.reports import final_reply

#: the most of one reply a chat is sent (16 Telegram messages); the rest stays in the thread
ANSWER_MAX_CHARS: Final = 64_000
_REST = "\n[… the rest of this answer is in the thread: alp thread show]"


async def final_text(d: Daemon, execution_id: str, output_tail: str | None) -> str:
    reply = await final_reply(d.store, execution_id)
    if reply is None or not reply.strip():
        return final_message(reply, output_tail).text
    text = reply.strip()
    if len(text) > ANSWER_MAX_CHARS:
        text = text[:ANSWER_MAX_CHARS] + _REST
    return redact(text).text


__all__ = ["ANSWER_MAX_CHARS", "final_text"]
