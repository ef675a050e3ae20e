"""History entries labelled by clear and undo, and the entries a recap may read.

History is never edited by a clear or an undo: an entry's labels are read, at query time,
through the thread's steps (`context_steps`), by the rule of
`alpd.domain.threads.steering.labels_of`:

* `before-clear` — the entry's root (a delegated child's entries count as its root's) opened
  on a context revision older than a clear of its thread;
* `undone` — its root's contribution was undone.

Labelled entries stay searchable (`history/search` returns the labels with each hit); a recap
reads only unlabelled ones (`recap_entries`). Entries copied into a fork or resume (`copy_of`)
hold no text of their own and are skipped: the original is read, with its own root's labels.
"""

from __future__ import annotations

from typing import Final

from alpd.store.db import Store
from alpd.store.history.labels import RecapEntry, readable_entries

__all__ = ["MAX_RECAP_ENTRIES", "RecapEntry", "recap_entries"]

#: the most entries one `recap_entries` call returns
MAX_RECAP_ENTRIES: Final = 10_000


async def recap_entries(
    store: Store,
    thread_id: str,
    *,
    after_id: int = 0,
    limit: int = 1000,
    newest: bool = False,
) -> list[RecapEntry]:
    """The thread's history entries a recap may read — never before a clear, never undone —
    with ids above `after_id`, oldest first: the first `limit` of them, or with `newest` the
    last `limit`. Each is re-hashed first (HISTORY_ENTRY_TAMPERED when it was edited).
    `limit` is capped at `MAX_RECAP_ENTRIES`."""
    limit = max(0, min(limit, MAX_RECAP_ENTRIES))
    entries = await readable_entries(
        store, thread_id, after_id=after_id, limit=limit, newest=newest
    )
    return entries[::-1] if newest else entries
