"""The one source of the history a recap may read (and the verbatim tail a new root gets).

Everything the recap's summariser is sent, and every line of the "last exchange" tail, comes
through `readable_entries`: entries copied from the transcripts of the thread's roots
(never from `temp` or delegated runs, never a fork's copies of its parent's lines), after a
given entry id, newest first up to a limit. An entry of a cleared or undone exchange must
never come out of here: the gist must not re-absorb what a person deliberately dropped.
"""

from __future__ import annotations

from typing import Final

import aiosqlite

from alpd.domain.recap import RecapEntry

_ENTRY_WHERE: Final = (
    "FROM history_entries h JOIN executions e ON e.id = h.execution_id "
    "WHERE e.thread_id = ? AND e.is_root = 1 AND h.id > ? AND h.copy_of IS NULL"
)


async def readable_entries(
    conn: aiosqlite.Connection, thread_id: str, after_id: int, limit: int
) -> tuple[list[RecapEntry], int]:
    """THE entry source of the recap: the newest `limit` entries of the thread's roots after
    `after_id` (oldest first), and how many there are in all."""
    async with conn.execute(
        "SELECT h.id, e.sequence, h.role, h.kind, h.text, h.tool_name, h.tool_input, "
        f"h.output_tail {_ENTRY_WHERE} ORDER BY h.id DESC LIMIT ?",
        (thread_id, after_id, limit),
    ) as cur:
        rows = list(await cur.fetchall())
    async with conn.execute(f"SELECT count(*) {_ENTRY_WHERE}", (thread_id, after_id)) as cur:
        total = int((await cur.fetchone())[0])  # type: ignore[index]
    entries = [
        RecapEntry(
            id=row["id"],
            sequence=row["sequence"],
            role=row["role"],
            kind=row["kind"],
            text=row["text"],
            tool_name=row["tool_name"],
            tool_input=row["tool_input"],
            output_tail=row["output_tail"],
        )
        for row in reversed(rows)
    ]
    return entries, total


__all__ = ["readable_entries"]
