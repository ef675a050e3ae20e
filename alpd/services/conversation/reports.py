"""Reports: every non-interactive root, and every sub-agent, reports into its thread.

After such an execution settles (`after_settle`), its transcript is copied first (so the
final reply and the usage are known), then one report is written — outcome, final message
(`alpd.domain.conversation.reports.final_message`: secret-filtered), cost, duration — at most one
per execution (a UNIQUE key: a report written twice is written once). A daemon killed between
the settle and the report writes it at its next start (`backfill`).

Then, for a run someone asked to hear about (a delivery with `notify`), the report is
announced: a `thread/report` notification on `events/subscribe` and a desktop notification
where the machine has a notifier. A sub-agent's report is also handed back to its parent
through the delivery path (`DeliveryService.submit`): the live parent may take it
(`delivery/pending`), else it waits for the thread's next round.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from typing import Final

import aiosqlite
import msgspec
import structlog

from alpd.desktop import notify_desktop
from alpd.domain.conversation.delivery import Source
from alpd.domain.conversation.reports import final_message, notification
from alpd.domain.runs.policy import Origin
from alpd.services.conversation.delivery import DeliveryService, Submission
from alpd.services.history.sync import HistoryService
from alpd.services.runs.rows import execution_from_row
from alpd.store.db import Store
from alpd.supervisor.supervisor import STDERR_FILE, STDOUT_FILE
from protocol import jsonrpc
from protocol import messages as m

#: how much of a run's output is read to find its last lines
OUTPUT_READ_BYTES: Final = 64 * 1024

log = structlog.get_logger("alpd.reports")

_origin = msgspec.json.Decoder(m.Origin)
_usage = msgspec.json.Decoder(m.Usage)

REPORT_COLUMNS: Final = (
    "id, thread_id, execution_id, kind, agent, runtime, origin, outcome, message, "
    "message_source, cost_usd, duration_seconds, usage, notify, parent_execution_id, created_at"
)


def report_from_row(row: sqlite3.Row) -> m.Report:
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


def _output(exec_dir: Path) -> str:
    """The end of what the run printed: stdout, else stderr."""
    for name in (STDOUT_FILE, STDERR_FILE):
        with contextlib.suppress(OSError), (exec_dir / name).open("rb") as f:
            f.seek(0, 2)
            size = f.tell()
            if size:
                f.seek(max(0, size - OUTPUT_READ_BYTES))
                return f.read().decode("utf-8", errors="replace")
    return ""


def _wants_report(row: sqlite3.Row) -> bool:
    if row["thread_id"] is None or row["status"] != "settled" or row["kind"] == "interactive":
        return False
    return bool(row["is_root"]) or row["kind"] == "sub-agent"


class ReportService:
    def __init__(self, history: HistoryService, delivery: DeliveryService) -> None:
        self.history = history
        self.delivery = delivery
        self.d = delivery.d

    async def after_settle(self, execution_id: str) -> None:
        row = await self.d.store.fetchone("SELECT * FROM executions WHERE id = ?", (execution_id,))
        if row is None or not _wants_report(row):
            return
        if row["transcript_path"] or row["native_session_id"]:
            await self.history.sync_execution(execution_id)
        report = await self._write(execution_id)
        if report is None:
            return
        if report.notify:
            await self._announce(report)
        if report.kind == "sub-agent" and report.parent_execution_id is not None:
            await self._hand_back(report)

    async def backfill(self) -> int:
        """Reports a kill -9 kept from being written (settled, reportable, none yet)."""
        rows = await self.d.store.fetchall(
            "SELECT e.id FROM executions e WHERE e.status = 'settled' AND e.thread_id IS NOT "
            "NULL AND e.kind != 'interactive' AND (e.is_root = 1 OR e.kind = 'sub-agent') "
            "AND NOT EXISTS (SELECT 1 FROM reports r WHERE r.execution_id = e.id) ORDER BY e.id"
        )
        for row in rows:
            try:
                await self.after_settle(row["id"])
            except Exception:
                log.exception("report_backfill_failed", execution=row["id"])
        return len(rows)

    async def _write(self, execution_id: str) -> m.Report | None:
        row = await self.d.store.fetchone("SELECT * FROM executions WHERE id = ?", (execution_id,))
        assert row is not None
        execution = execution_from_row(row)
        reply = await self.d.store.fetchone(
            "SELECT text FROM history_entries WHERE execution_id = ? AND role = 'assistant' "
            "AND kind = 'reply' AND text IS NOT NULL ORDER BY id DESC LIMIT 1",
            (execution_id,),
        )
        message = final_message(
            reply["text"] if reply is not None else None, _output(Path(row["exec_dir"]))
        )
        at = self.d.clock.now_iso()

        async def unit(conn: aiosqlite.Connection) -> m.Report | None:
            async with conn.execute(
                "SELECT coalesce(max(notify), 0) FROM deliveries WHERE execution_id = ?",
                (execution_id,),
            ) as cur:
                notify = (await cur.fetchone())[0]  # type: ignore[index]
            async with conn.execute(
                "INSERT INTO reports (thread_id, owner_uid, execution_id, kind, agent, runtime, "
                "origin, outcome, message, message_source, redactions, cost_usd, "
                "duration_seconds, usage, notify, parent_execution_id, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                f"ON CONFLICT (execution_id) DO NOTHING RETURNING {REPORT_COLUMNS}",
                (
                    row["thread_id"],
                    row["owner_uid"],
                    execution_id,
                    row["kind"],
                    row["agent"],
                    row["runtime"],
                    row["origin"],
                    row["outcome"],
                    message.text,
                    message.source,
                    message.redactions,
                    execution.cost_usd,
                    execution.duration_seconds,
                    row["usage"],
                    notify,
                    row["parent_id"],
                    at,
                ),
            ) as cur:
                inserted = await cur.fetchone()
            return None if inserted is None else report_from_row(inserted)

        return await self.d.store.write(unit)

    async def _announce(self, report: m.Report) -> None:
        thread = await self.d.store.fetchone(
            "SELECT title FROM threads WHERE id = ?", (report.thread_id,)
        )
        title = thread["title"] if thread is not None else None
        frame = jsonrpc.encode_notification(
            "thread/report", m.ThreadReport(report=report, thread_title=title)
        )
        self.d.events.publish("thread/report", frame, report.thread_id)
        heading, body = notification(
            thread_title=title,
            kind=report.kind,
            outcome=report.outcome,
            message=report.message,
            cost_usd=report.cost_usd,
        )
        await notify_desktop(heading, body)

    async def _hand_back(self, report: m.Report) -> None:
        """A sub-agent's result goes to its parent: injected if the parent asks, else one
        round of the thread after the running root settles."""
        label = f"{report.agent} ({report.execution_id}), {report.outcome}"
        submission = Submission(
            thread_id=report.thread_id,
            kind="push",
            origin=Origin(
                door="delegate",
                by=f"execution:{report.execution_id}",
                push_source=f"sub-agent {report.agent}",
                purpose="sub-agent result",
            ),
            source=Source(kind="sub-agent", label=label, at=report.at),
            text=report.message or f"(no output; the sub-agent {report.outcome})",
            target_execution_id=report.parent_execution_id,
        )
        await self.delivery.submit(submission, check_runnable=False)


async def recent_reports(store: Store, thread_id: str, limit: int = 10) -> list[m.Report]:
    """The thread's last `limit` reports, oldest first."""
    rows = await store.fetchall(
        f"SELECT {REPORT_COLUMNS} FROM reports WHERE thread_id = ? ORDER BY id DESC LIMIT ?",
        (thread_id, limit),
    )
    return [report_from_row(row) for row in reversed(rows)]


__all__ = ["REPORT_COLUMNS", "ReportService", "recent_reports", "report_from_row"]
