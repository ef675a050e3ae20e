"""What the checkpoints need of the executions table: a thread's root by its sequence, and
its last one. Checkpoints themselves live in git (alpd.services.checkpoints.shadow), not here.
"""

from __future__ import annotations

from alpd.store.db import Store
from alpd.store.runs import EXECUTION_COLUMNS, ExecutionRecord, execution_record

__all__ = ["root_by_sequence"]


async def root_by_sequence(store: Store, thread_id: str, sequence: int) -> ExecutionRecord | None:
    row = await store.fetchone(
        f"SELECT {EXECUTION_COLUMNS} FROM executions "
        "WHERE thread_id = ? AND is_root = 1 AND sequence = ?",
        (thread_id, sequence),
    )
    return None if row is None else execution_record(row)
