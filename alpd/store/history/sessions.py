"""Native sessions of runs that announce them late (`alpd.services.history.discovery`):
which runs still lack one, whether another execution owns one, and recording it."""

from __future__ import annotations

from dataclasses import dataclass

from alpd.store.db import Store, Tx

__all__ = ["LateRun", "late_runs", "record_session", "session_claimed"]


@dataclass(frozen=True, slots=True)
class LateRun:
    """An execution without its native session id or transcript yet, and how it runs."""

    id: str
    runtime: str
    exec_dir: str
    cwd: str
    pid: int | None
    pid_start_time: float | None
    boot_id: str | None
    started_at: str | None
    created_at: str


_LATE = (
    "SELECT id, runtime, exec_dir, cwd, pid, pid_start_time, boot_id, started_at, "
    "created_at FROM executions "
    "WHERE (native_session_id IS NULL OR transcript_path IS NULL) AND "
)


async def late_runs(store: Store, execution_id: str | None) -> list[LateRun]:
    """Those still lacking a session: every unsettled one, or only `execution_id`."""
    if execution_id is None:
        rows = await store.fetchall(_LATE + "status != 'settled'")
    else:
        rows = await store.fetchall(_LATE + "id = ?", (execution_id,))
    return [LateRun(*row) for row in rows]


async def session_claimed(store: Store, execution_id: str, session_id: str) -> bool:
    """Another execution already owns this native session."""
    row = await store.fetchone(
        "SELECT 1 FROM executions WHERE native_session_id = ? AND id != ?",
        (session_id, execution_id),
    )
    return row is not None


async def record_session(tx: Tx, execution_id: str, session_id: str, path: str) -> None:
    """The run's native session and its transcript (an empty path records none)."""
    await tx.execute(
        "UPDATE executions SET native_session_id = ?, transcript_path = nullif(?, '') WHERE id = ?",
        (session_id, path, execution_id),
    )
