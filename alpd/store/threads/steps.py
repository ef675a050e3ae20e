"""SQL over `context_steps` (migration V10): the clears and undos of threads.

The rule the labels follow is `alpd.domain.threads.steering.labels_of`; this is its SQL form, so a
search or a recap can label (or skip) thousands of entries in the query that finds them.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from alpd.domain.threads.steering import HistoryLabel, Step, StepKind
from alpd.store.db import Store, Tx

__all__ = [
    "StepRecord",
    "insert_step",
    "labels_from",
    "labels_sql",
    "load_steps",
    "steps_of_thread",
]


@dataclass(frozen=True, slots=True)
class StepRecord:
    """A stored step: the domain's `Step` and who made it, when, through which door."""

    step: Step
    by: str
    door: str
    at: str


async def insert_step(tx: Tx, thread_id: str, step: Step, *, by: str, door: str, at: str) -> None:
    """Record the step beside the snapshot it wrote."""
    await tx.execute(
        "INSERT INTO context_steps (thread_id, revision, kind, replaced_revision, "
        "restored_revision, execution_id, requested_by, door, at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            thread_id,
            step.revision,
            step.kind,
            step.revision - 1,
            step.restored_revision,
            step.execution_id,
            by,
            door,
            at,
        ),
    )


_STEPS = "SELECT * FROM context_steps WHERE thread_id = ? ORDER BY revision"


async def load_steps(tx: Tx, thread_id: str) -> list[StepRecord]:
    """The thread's steps, oldest first (inside a unit)."""
    async with tx.execute(_STEPS, (thread_id,)) as cur:
        rows = list(await cur.fetchall())
    return [_step_record(row) for row in rows]


async def steps_of_thread(store: Store, thread_id: str) -> list[StepRecord]:
    """The thread's steps, oldest first (read outside a unit)."""
    return [_step_record(row) for row in await store.fetchall(_STEPS, (thread_id,))]


def _step_record(row: sqlite3.Row) -> StepRecord:
    kind: StepKind = "undo" if row["kind"] == "undo" else "clear"
    step = Step(
        kind=kind,
        revision=row["revision"],
        execution_id=row["execution_id"],
        restored_revision=row["restored_revision"],
    )
    return StepRecord(step=step, by=row["requested_by"], door=row["door"], at=row["at"])


def labels_sql(root_id: str) -> str:
    """Two SQL columns, `before_clear` and `undone` (0/1), for the root named by the SQL
    expression `root_id` (NULL, or a root of no thread: both 0)."""
    return (
        "EXISTS (SELECT 1 FROM executions lr JOIN context_steps ls "
        "ON ls.thread_id = lr.thread_id AND ls.kind = 'clear' "
        f"AND ls.revision > lr.context_revision WHERE lr.id = {root_id}) AS before_clear, "
        "EXISTS (SELECT 1 FROM context_steps us "
        f"WHERE us.kind = 'undo' AND us.execution_id = {root_id}) AS undone"
    )


def labels_from(before_clear: object, undone: object) -> list[HistoryLabel]:
    """The labels of a row selected with `labels_sql`, from its two columns, in
    `HISTORY_LABELS` order."""
    labels: list[HistoryLabel] = []
    if before_clear:
        labels.append("before-clear")
    if undone:
        labels.append("undone")
    return labels
