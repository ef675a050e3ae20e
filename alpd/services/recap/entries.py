"""The one source of the history a recap may read (and the verbatim tail a new root gets).

Everything the recap's summariser is sent, and every line of the "last exchange" tail, comes
through `readable_entries`, a view of `alpd.services.history.labels.recap_entries`: entries
of the thread's roots (and their delegated children), never one of an exchange that was
cleared or undone, each re-hashed before it is read; after a given entry id, the newest up
to a limit. The gist must not re-absorb what a person deliberately dropped.

`alpd.store.recap.STANDS` is the other half of that rule: a recap made before a clear, or one
that read a root since undone, no longer stands. It is not shown, not given to new roots, and
the next refresh starts over from what may still be read instead of building on it.
"""

from __future__ import annotations

from alpd.domain.recap.summary import RecapEntry
from alpd.services.history.labels import recap_entries
from alpd.store.db import Store


async def readable_entries(
    store: Store, thread_id: str, after_id: int, limit: int
) -> list[RecapEntry]:
    """The newest `limit` entries a recap may read after `after_id`, oldest first."""
    found = await recap_entries(store, thread_id, after_id=after_id, limit=limit, newest=True)
    return [
        RecapEntry(
            id=entry.id,
            sequence=entry.sequence,
            role=entry.role,
            kind=entry.kind,
            text=entry.text,
            tool_name=entry.tool_name,
            tool_input=entry.tool_input,
            output_tail=entry.output_tail,
        )
        for entry in found
    ]


__all__ = ["readable_entries"]
