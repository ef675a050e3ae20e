"""Reports: every non-interactive root, and every sub-agent, reports into its thread.

After such an execution settles (`after_settle`), its transcript is copied first (so the
final reply and the usage are known), then one report is written — outcome, final message
(`alpd.domain.conversation.reports.final_message`: secret-filtered; a failed run's leads
with the runtime's own error line), cost, duration — at most one
per execution (a UNIQUE key: a report written twice is written once). A daemon killed between
the settle and the report writes it at its next start (`backfill`).

A schedule's or a push's `to` naming other threads (`thread:ID`, alpd.domain.report_destinations)
has the report delivered into each of them too (`_forward`); the chat doors read the rest
of `to` (alpd.channels.manager).

Then, for a run someone asked to hear about (a delivery with `notify`), the report is
announced: a `thread/report` notification on `events/subscribe` and a desktop notification
where the machine has a notifier. A sub-agent's report is also handed back to its parent
through the delivery path (`DeliveryService.submit`): the live parent may take it
(`delivery/pending`), else it waits for the thread's next round.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Final

import anyio
import structlog

from alpd.desktop import notify_desktop
from alpd.domain import report_destinations as destinations
from alpd.domain.conversation.delivery import Source
from alpd.domain.conversation.reports import final_message, notification
from alpd.domain.runs.policy import Origin
from alpd.errors import AlpError
from alpd.services.conversation.delivery import DeliveryService, Submission
from alpd.services.history.sync import HistoryService
from alpd.store.conversation import reports as store
from alpd.store.conversation.reports import ReportSubject
from alpd.store.db import Tx
from alpd.store.threads.refs import named_thread
from alpd.supervisor.supervisor import STDERR_FILE, STDOUT_FILE
from protocol import jsonrpc
from protocol import messages as m
from protocol.runtime_output import first_error_line

#: how much of a run's output is read to find its last lines
OUTPUT_READ_BYTES: Final = 64 * 1024

log = structlog.get_logger("alpd.reports")


def _tail(path: Path) -> str:
    """The last `OUTPUT_READ_BYTES` of a file ("" when there is none)."""
    with contextlib.suppress(OSError), path.open("rb") as f:
        f.seek(0, 2)
        size = f.tell()
        f.seek(max(0, size - OUTPUT_READ_BYTES))
        return f.read().decode("utf-8", errors="replace")
    return ""


def _output(exec_dir: Path) -> tuple[str, str]:
    """The end of what the run printed: (stdout, else stderr; the runtime's error line
    in either)."""
    stdout, stderr = _tail(exec_dir / STDOUT_FILE), _tail(exec_dir / STDERR_FILE)
    error = first_error_line(stdout) or first_error_line(stderr) or ""
    return (stdout or stderr), error


def _wants_report(subject: ReportSubject) -> bool:
    if subject.thread_id is None or subject.status != "settled" or subject.kind == "interactive":
        return False
    return subject.is_root or subject.kind == "sub-agent"


class ReportService:
    def __init__(self, history: HistoryService, delivery: DeliveryService) -> None:
        self.history = history
        self.delivery = delivery
        self.d = delivery.d
        #: told of every report written (the chat channels post them where asked)
        self.on_report: list[Callable[[m.Report], Awaitable[None]]] = []

    async def after_settle(self, execution_id: str) -> None:
        subject = await store.report_subject(self.d.store, execution_id)
        if subject is None or not _wants_report(subject):
            return
        if subject.transcript_path or subject.native_session_id:
            await self.history.sync_execution(execution_id)
        report = await self._write(execution_id)
        if report is None:
            return
        try:
            await self.history.transcripts.publish_report(report)
        except Exception:
            log.exception("transcript_publish_failed", execution=execution_id)
        for listener in self.on_report:
            try:
                await listener(report)
            except Exception:
                log.exception("report_listener_failed", execution=execution_id)
        if report.notify:
            await self._announce(report)
        if report.kind == "sub-agent" and report.parent_execution_id is not None:
            await self._hand_back(report)
        for target in destinations.threads(report.origin.report_to):
            try:
                await self._forward(report, target)
            except AlpError as exc:
                log.warning("report_not_forwarded", execution=execution_id, target=target,
                            error=exc.name, reason=exc.message)  # fmt: skip

    async def backfill(self) -> int:
        """Reports a kill -9 kept from being written (settled, reportable, none yet)."""
        unreported = await store.unreported_executions(self.d.store)
        for execution_id in unreported:
            try:
                await self.after_settle(execution_id)
            except Exception:
                log.exception("report_backfill_failed", execution=execution_id)
        return len(unreported)

    async def _write(self, execution_id: str) -> m.Report | None:
        subject = await store.report_subject(self.d.store, execution_id)
        assert subject is not None
        reply = await store.final_reply(self.d.store, execution_id)
        output, error = await anyio.to_thread.run_sync(_output, Path(subject.exec_dir))
        failed = subject.outcome not in (None, "completed")
        message = final_message(reply, output, error if failed else None)
        at = self.d.clock.now_iso()

        async def unit(tx: Tx) -> m.Report | None:
            notify = await store.reported_notify(tx, execution_id)
            return await store.insert_report(tx, subject, message, notify=notify, at=at)

        return await self.d.store.write(unit)

    async def _announce(self, report: m.Report) -> None:
        title = await store.thread_title(self.d.store, report.thread_id)
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

    async def _forward(self, report: m.Report, target: str) -> None:
        """A schedule's or a push's `to thread:ID`: the report delivered into that thread
        (the one delivery path: injected, queued, or a push root) under a report envelope.
        The root it makes carries no `report_to`, so a report is forwarded once, never on."""
        source = await named_thread(self.d.store, report.thread_id)
        title = (source.title if source else None) or report.thread_id
        submission = Submission(
            thread_id=target,
            kind="push",
            origin=Origin(
                door="report",
                by=f"execution:{report.execution_id}",
                push_source=f"report of {title}",
                purpose="report",
            ),
            source=Source(kind="report", label=f"{report.kind} run of {title}", at=report.at),
            text=report.message or f"(no output; the run {report.outcome})",
            sender_uid=source.owner_uid if source else None,
        )
        await self.delivery.submit(submission)

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


__all__ = ["ReportService"]
