"""Threads in the search index: each thread's title and context lines, redacted, as one
document (`thread_docs`), refreshed when the thread changed."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

import msgspec

from alpd.domain.secrets.filter import redact
from alpd.domain.threads.context import Snapshot
from alpd.store.history.threads import replace_thread_doc, thread_doc_source

if TYPE_CHECKING:
    from alpd.services.history.sync import HistoryService

__all__ = ["refresh_thread_doc"]


async def refresh_thread_doc(history: HistoryService, thread_id: str) -> None:
    """Write the thread's document again unless it was made from the thread as it is."""
    found = await thread_doc_source(history.d.store, thread_id)
    if found is None or found.indexed == found.updated_at:
        return
    context = _context_text(found.body) if found.body is not None else ""
    title = redact(found.title).text if found.title else None
    context = redact(context).text
    await history.write(
        partial(
            replace_thread_doc,
            thread_id=thread_id,
            title=title,
            context=context,
            source=found.updated_at,
        )
    )


_SNAPSHOT = msgspec.json.Decoder(Snapshot)


def _context_text(body: bytes) -> str:
    """The searchable lines of a context snapshot."""
    snapshot = _SNAPSHOT.decode(body)
    lines = [snapshot.objective.text] if snapshot.objective is not None else []
    for group in (
        snapshot.decisions,
        snapshot.constraints,
        snapshot.open_items,
        snapshot.next_actions,
    ):
        lines += [line.text for line in group]
    lines += [o.summary for o in snapshot.outcomes if o.summary]
    return "\n".join(lines)
