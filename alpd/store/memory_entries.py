"""The history entries a memory cites (docs/memory.md), read when it is written (each must be
the writer's) and when it is shown (as they are now; a gone one is simply not returned).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from alpd.store.db import Tx

__all__ = ["EXCERPT_CHARS", "CitedEntryRow", "cited_entries"]

#: what `alp memory show` prints of a cited entry's text
EXCERPT_CHARS: Final = 160


@dataclass(frozen=True, slots=True)
class CitedEntryRow:
    id: int
    execution_id: str
    thread_id: str | None
    thread_title: str | None
    role: str | None
    kind: str | None
    at: str | None
    #: the start of its text (or of its tool's name and input), one line
    excerpt: str


async def cited_entries(tx: Tx, ids: Sequence[int], owner_uid: int) -> dict[int, CitedEntryRow]:
    """The entries of `ids` that exist and are `owner_uid`'s (by their execution's owner),
    by id."""
    if not ids:
        return {}
    sql = """
    SELECT h.id, h.execution_id, e.thread_id, t.title, h.role, h.kind,
        coalesce(h.ts, e.created_at),
        substr(coalesce(h.text, h.tool_name || ' ' || coalesce(h.tool_input, ''), ''), 1, ?)
    FROM history_entries h JOIN executions e ON e.id = h.execution_id
    LEFT JOIN threads t ON t.id = e.thread_id
    WHERE h.id IN (SELECT value FROM json_each(?)) AND e.owner_uid = ?
    """
    async with tx.execute(sql, (EXCERPT_CHARS * 4, json.dumps(list(ids)), owner_uid)) as cursor:
        rows = await cursor.fetchall()
    found = {}
    for entry_id, execution_id, thread_id, title, role, kind, at, text in rows:
        found[entry_id] = CitedEntryRow(
            entry_id, execution_id, thread_id, title, role, kind, at, _one_line(text or "")
        )
    return found


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= EXCERPT_CHARS else line[: EXCERPT_CHARS - 1] + "…"
