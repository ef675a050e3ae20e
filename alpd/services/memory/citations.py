"""The history entries a memory cites: checked when it is written (each must exist and be
the writer's: HISTORY_ENTRY_NOT_FOUND names those that are not) and read back as they are
now when it is shown (one that is gone since shows as its id alone, `exists: false`)."""

from __future__ import annotations

from collections.abc import Sequence

from alpd.errors import HistoryEntryNotFound
from alpd.store.db import Tx
from alpd.store.memory_entries import cited_entries
from protocol import messages as m

__all__ = ["check_entries", "entries_of"]


async def check_entries(tx: Tx, ids: Sequence[int], owner_uid: int) -> None:
    found = await cited_entries(tx, ids, owner_uid)
    missing = [entry_id for entry_id in ids if entry_id not in found]
    if missing:
        raise HistoryEntryNotFound(
            f"no history entry {', '.join(map(str, missing))} of yours to cite: a search "
            "hit's entryId (`alp search --json`) or `alp thread log --json` gives an entry's id",
            entryIds=missing,
        )


async def entries_of(tx: Tx, ids: Sequence[int], owner_uid: int) -> list[m.CitedEntry]:
    found = await cited_entries(tx, ids, owner_uid)
    cited = []
    for entry_id in ids:
        row = found.get(entry_id)
        if row is None:
            cited.append(m.CitedEntry(id=entry_id, exists=False))
            continue
        cited.append(
            m.CitedEntry(
                id=row.id,
                exists=True,
                execution_id=row.execution_id,
                thread_id=row.thread_id,
                thread_title=row.thread_title,
                role=row.role,
                kind=row.kind,
                at=row.at,
                excerpt=row.excerpt,
            )
        )
    return cited
