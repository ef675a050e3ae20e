"""SQL over `reports` (migration V11), and what a report is written from.

`alpd.services.conversation.reports` decides whether a settled execution reports and what
its message says; it writes the report in one unit of its own (`reported_notify`, then
`insert_report`: at most one per execution, a UNIQUE key).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime
from typing import Final

import msgspec

from alpd.domain.conversation.reports import FinalMessage
from alpd.store.db import Store, Tx
from protocol import messages as m

__all__ = [
    "ReportSubject",
    "final_reply",
    "insert_report",
    "recent_reports",
    "report_by_id",
    "report_subject",
    "reported_notify",
    "thread_title",
    "unreported_executions",
]

_origin = msgspec.json.Decoder(m.Origin)
_usage = msgspec.json.Decoder(m.Usage)

_REPORT_COLUMNS: Final = (
    "id, thread_id, execution_id, kind, agent, runtime, origin, outcome, message, "
    "message_source, cost_usd, duration_seconds, usage, notify, parent_execution_id, created_at"
)


@dataclass(frozen=True, slots=True)
class ReportSubject:
    """What a report is made of, from its execution's row (`origin`, `usage`: their stored
    JSON, copied as they are)."""

    id: str
    owner_uid: int
    thread_id: str | None
    is_root: bool
    parent_id: str | None
    kind: str
    agent: str
    runtime: str
    origin: str
    status: str
    outcome: str | None
    exec_dir: str
    native_session_id: str | None
    transcript_path: str | None
    usage: str | None
    cost_usd: float | None
    duration_seconds: float | None


def _duration(started: str | None, settled: str | None) -> float | None:
    if not started or not settled:
        return None
    begin = datetime.fromisoformat(started.replace("Z", "+00:00"))
    end = datetime.fromisoformat(settled.replace("Z", "+00:00"))
    return round((end - begin).total_seconds(), 3)


def _report(row: sqlite3.Row) -> m.Report:
    return m.Report(
        id=row["id"],
        thread_id=row["thread_id"],
        execution_id=row["execution_id"],
        kind=row["kind"],
        agent=row["agent"],
        runtime=row["runtime"],
        origin=_origin.decode(row["origin"]),
        outcome=row["outcome"],
        message=row["message"],
        message_source=row["message_source"],
        at=row["created_at"],
        cost_usd=row["cost_usd"],
        duration_seconds=row["duration_seconds"],
        usage=_usage.decode(row["usage"]) if row["usage"] else None,
        notify=bool(row["notify"]),
        parent_execution_id=row["parent_execution_id"],
    )


async def report_subject(store: Store, execution_id: str) -> ReportSubject | None:
    row = await store.fetchone("SELECT * FROM executions WHERE id = ?", (execution_id,))
    if row is None:
        return None
    return ReportSubject(
        id=row["id"],
        owner_uid=row["owner_uid"],
        thread_id=row["thread_id"],
        is_root=bool(row["is_root"]),
        parent_id=row["parent_id"],
        kind=row["kind"],
        agent=row["agent"],
        runtime=row["runtime"],
        origin=row["origin"],
        status=row["status"],
        outcome=row["outcome"],
        exec_dir=row["exec_dir"],
        native_session_id=row["native_session_id"],
        transcript_path=row["transcript_path"],
        usage=row["usage"],
        cost_usd=row["cost_usd"],
        duration_seconds=_duration(row["started_at"] or row["created_at"], row["settled_at"]),
    )


async def unreported_executions(store: Store) -> list[str]:
    """Settled executions that report and have no report (a kill -9 came between)."""
    rows = await store.fetchall(
        "SELECT e.id FROM executions e WHERE e.status = 'settled' AND e.thread_id IS NOT "
        "NULL AND e.kind != 'interactive' AND (e.is_root = 1 OR e.kind = 'sub-agent') "
        "AND NOT EXISTS (SELECT 1 FROM reports r WHERE r.execution_id = e.id) ORDER BY e.id"
    )
    return [row["id"] for row in rows]


async def final_reply(store: Store, execution_id: str) -> str | None:
    """The execution's last assistant reply with a text, as its history holds it."""
    reply = await store.fetchone(
        "SELECT text FROM history_entries WHERE execution_id = ? AND role = 'assistant' "
        "AND kind = 'reply' AND text IS NOT NULL ORDER BY id DESC LIMIT 1",
        (execution_id,),
    )
    text: str | None = None if reply is None else reply["text"]
    return text


async def reported_notify(tx: Tx, execution_id: str) -> int:
    """Whether a delivery into the execution asked to hear how it ended (0 or 1)."""
    async with tx.execute(
        "SELECT coalesce(max(notify), 0) FROM deliveries WHERE execution_id = ?",
        (execution_id,),
    ) as cur:
        notify: int = (await cur.fetchone())[0]  # type: ignore[index]
    return notify


async def insert_report(
    tx: Tx, subject: ReportSubject, message: FinalMessage, *, notify: int, at: str
) -> m.Report | None:
    """The execution's report; None when it already has one."""
    async with tx.execute(
        "INSERT INTO reports (thread_id, owner_uid, execution_id, kind, agent, runtime, "
        "origin, outcome, message, message_source, redactions, cost_usd, "
        "duration_seconds, usage, notify, parent_execution_id, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        f"ON CONFLICT (execution_id) DO NOTHING RETURNING {_REPORT_COLUMNS}",
        (
            subject.thread_id,
            subject.owner_uid,
            subject.id,
            subject.kind,
            subject.agent,
            subject.runtime,
            subject.origin,
            subject.outcome,
            message.text,
            message.source,
            message.redactions,
            subject.cost_usd,
            subject.duration_seconds,
            subject.usage,
            notify,
            subject.parent_id,
            at,
        ),
    ) as cur:
        inserted = await cur.fetchone()
    return None if inserted is None else _report(inserted)


async def thread_title(store: Store, thread_id: str) -> str | None:
    thread = await store.fetchone("SELECT title FROM threads WHERE id = ?", (thread_id,))
    title: str | None = thread["title"] if thread is not None else None
    return title


async def report_by_id(store: Store, report_id: int) -> m.Report | None:
    row = await store.fetchone(f"SELECT {_REPORT_COLUMNS} FROM reports WHERE id = ?", (report_id,))
    return _report(row) if row is not None else None


async def recent_reports(store: Store, thread_id: str, limit: int = 10) -> list[m.Report]:
    """The thread's last `limit` reports, oldest first."""
    rows = await store.fetchall(
        f"SELECT {_REPORT_COLUMNS} FROM reports WHERE thread_id = ? ORDER BY id DESC LIMIT ?",
        (thread_id, limit),
    )
    return [_report(row) for row in reversed(rows)]
