"""Resume after a usage limit: a headless root that ended on its runtime's usage limit
("resets at …") gets a one-off wake of its thread at the reset time (docs/budgets.md).

After each settle (`after_settle`), the tail of the root's headless output is read for the
limit (`alpd.domain.budgets.usage_limit`: Claude Code's `usage_limit_reached` with its
`resetsAt`, Codex's "You've hit your usage limit … try again at 4:45 AM"). A limit with a
reset time becomes a schedule of the thread (rule `at` the reset, `reason` `usage-limit`,
`wake_of` the root): listed by `alp schedule list` and `alp ps`, cancelled by `alp schedule
rm`, announced as `schedule/changed`. When it fires, the scheduler delivers its prompt as
any fire's (a `scheduled` root, or queued behind a running one).

Idempotent: `wake_of` is unique, so a settle looked at twice makes one wake. Capped: a wake
whose own root hits the limit again wakes the thread again, at most `MAX_WAKES` times in a
row; then nothing more is scheduled and the desktop is told. A limit without a reset time
(or one more than `MAX_WAIT` away) is logged and not woken.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

import msgspec
import structlog

from alpd.clock import iso
from alpd.desktop import notify_desktop
from alpd.domain.budgets.usage_limit import MAX_WAKES, UsageLimit, usage_limit
from alpd.services.conversation.wake import owner_caller
from alpd.services.schedules.service import SCHEDULE_PREFIX, ScheduleService
from alpd.store import schedules as store
from alpd.store import wakes
from alpd.store.db import Tx
from alpd.store.runs import ExecutionRecord, execution_by_id
from alpd.supervisor.supervisor import STDOUT_FILE
from protocol import messages as m

log = structlog.get_logger("alpd.wakes")

REASON = "usage-limit"
#: How much of the end of a run's output is read for the limit (it is the last thing said).
TAIL_BYTES = 64 * 1024
_origin = msgspec.json.Decoder(m.Origin)


def wake_prompt(execution_id: str, limit: UsageLimit) -> str:
    said = " ".join(limit.message.split())[:300]
    return (
        f"The usage limit that stopped run {execution_id} has reset (it said: {said}). "
        "Continue the task you were working on when it stopped; do not repeat work that "
        "is already done."
    )


def read_tail(path: Path, size: int = TAIL_BYTES) -> list[str]:
    """The whole lines of the last `size` bytes of a file ([] if there is none)."""
    try:
        with path.open("rb") as f:
            end = os.fstat(f.fileno()).st_size
            f.seek(max(0, end - size))
            data = f.read(size)
    except OSError:
        return []
    lines = data.decode("utf-8", errors="replace").splitlines()
    return lines[1:] if end > size else lines


class UsageLimitWakes:
    def __init__(self, schedules: ScheduleService) -> None:
        self.schedules = schedules
        self.d = schedules.d

    async def after_settle(self, execution_id: str) -> None:
        record = await execution_by_id(self.d.store, execution_id)
        if record is None or not record.is_root or not record.headless:
            return
        if record.thread_id is None or record.runtime not in ("claude", "codex"):
            return
        now = self.d.clock.now()
        local = datetime.now().astimezone().tzinfo
        assert local is not None
        lines = read_tail(Path(record.exec_dir) / STDOUT_FILE)
        limit = usage_limit(record.runtime, lines, now, local)
        if limit is None:
            return
        if limit.resets_at is None:
            log.warning("usage_limit_without_reset", execution=record.id, said=limit.message)
            return
        if await self._wakes_before(record) >= MAX_WAKES:
            log.warning("usage_limit_wakes_exhausted", execution=record.id)
            await notify_desktop(
                "alp: usage limit",
                f"thread {record.thread_id} hit its usage limit again after {MAX_WAKES} "
                "wakes; it is not woken again (continue it by hand)",
            )
            return
        await self._schedule(record, limit, limit.resets_at)

    async def _wakes_before(self, record: ExecutionRecord) -> int:
        """How many usage-limit wakes in a row led to this root."""
        count, current = 0, record
        while count <= MAX_WAKES:
            schedule_id = _origin.decode(current.origin).schedule_id
            if schedule_id is None:
                return count
            found = await wakes.wake_reason(self.d.store, schedule_id)
            if found is None or found[0] != REASON or found[1] is None:
                return count
            count += 1
            earlier = await execution_by_id(self.d.store, found[1])
            if earlier is None:
                return count
            current = earlier
        return count

    async def _schedule(self, record: ExecutionRecord, limit: UsageLimit, at: datetime) -> None:
        assert record.thread_id is not None
        schedule_id = self.d.clock.new_id(SCHEDULE_PREFIX)
        now = self.d.clock.now_iso()
        new = store.NewSchedule(
            id=schedule_id,
            owner_uid=record.owner_uid,
            thread_id=record.thread_id,
            rule="at",
            expression=iso(at),
            timezone="UTC",
            anchor_at=iso(at),
            prompt=wake_prompt(record.id, limit),
            agent=record.agent,
            runtime=None,
            notify=False,
            catch_up="one",
            next_fire_at=iso(at),
            at=now,
            host_id=self.d.host_id,  # fired by this host, as a schedule made here
        )

        async def unit(tx: Tx) -> bool:
            return await wakes.insert_wake(tx, new, REASON, record.id)

        if not await self.d.store.write(unit):
            return  # this run has its wake already
        log.info("usage_limit_wake", execution=record.id, schedule=schedule_id, at=iso(at))
        await self.schedules.announce(owner_caller(record.owner_uid), schedule_id, "created")


__all__ = ["REASON", "UsageLimitWakes", "read_tail", "wake_prompt"]
