"""Budgets of threads and schedules: set and read (`thread/budget`; a schedule's is given at
`schedule/create`), held while roots run, and announced.

Each pass (`enforce`) reads the running headless roots and the budgets of their threads and
of the schedules that fired them, with the spend so far (every execution's `costUsd` and
tokens, which the history sync keeps current while a run goes on). A pass runs as soon as the
history sync has copied entries (`spent`: new usage may have crossed a limit) and otherwise
every `INTERVAL`; while a running root is under a hard limit (`holding`) the history sync
reads running transcripts every 0.25 s instead of every second, so a runaway root is stopped
within about a quarter of a second of its crossing plus the stop itself.
A budget at its hard limit ends the root through the cancel path (`budget-exceeded`, as a
run's own cap does); at its soft limit it is announced. A settle checks the thread's budgets
again (the last response lands in the cost at the settle's sync), so an interactive root —
which no limit ends: the person is at its terminal — warns too.

An announcement goes to every door once per level per budget (`warned`, reset when the
budget is set again): `budget/warning` on `events/subscribe` (editors, the web page), a
desktop notification as reports send, and the chat channels' notices of kind `budget`
(`on_warning`, wired by the assembly).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final

import anyio
import msgspec
import structlog

from alpd.desktop import notify_desktop
from alpd.domain.budgets.levels import Level, Limits, check_limits, describe, level, worse
from alpd.errors import AlpError, InvalidArgument
from alpd.services.context import Caller
from alpd.services.runs.executions import Executions
from alpd.services.runs.graph import end_graph
from alpd.store import budgets as store
from alpd.store.budgets import StoredBudget
from alpd.store.db import Tx
from alpd.store.runs import ExecutionRecord, execution_by_id, running_headless
from alpd.store.threads.shell import find_thread
from protocol import jsonrpc
from protocol import messages as m

log = structlog.get_logger("alpd.budgets")

_origin = msgspec.json.Decoder(m.Origin)

OnWarning = Callable[[m.BudgetWarning], Awaitable[None]]

#: the pause between passes when no sync has copied anything (a schedule's budget, a
#: budget set while a root runs)
INTERVAL: Final = 2.0


def budget_wire(budget: StoredBudget) -> m.Budget:
    limits = budget.limits
    return m.Budget(
        scope=budget.scope,  # type: ignore[arg-type]
        target_id=budget.target_id,
        level=level(limits, budget.spend),
        usd=limits.usd,
        soft_usd=limits.soft_usd,
        tokens=limits.tokens,
        soft_tokens=limits.soft_tokens,
        spent_usd=round(budget.spend.cost_usd, 6),
        spent_tokens=budget.spend.tokens,
        updated_at=budget.updated_at,
        window_percent=limits.window_percent,
        soft_window_percent=limits.soft_window_percent,
        window_used_percent=budget.spend.window_percent,
    )


def limits_from(usd: float | None, soft_usd: float | None, tokens: int | None,
                soft_tokens: int | None, window_percent: float | None = None,
                soft_window_percent: float | None = None) -> Limits:  # fmt: skip
    """Checked limits, or INVALID_ARGUMENT saying what is wrong."""
    try:
        return check_limits(
            Limits(usd=usd, soft_usd=soft_usd, tokens=tokens, soft_tokens=soft_tokens,
                   window_percent=window_percent, soft_window_percent=soft_window_percent)
        )  # fmt: skip
    except ValueError as exc:
        raise InvalidArgument(str(exc)) from None


class BudgetService:
    def __init__(self, ex: Executions) -> None:
        self.ex = ex
        self.d = ex.d
        #: more doors to tell (the chat channels)
        self.on_warning: list[OnWarning] = []
        #: set by the history sync when it copied entries: spend may have moved
        self.spent = anyio.Event()
        #: whether the last pass found a running root under a budget with a hard limit
        #: (the history sync then reads running transcripts sooner)
        self.holding = False

    # thread/budget

    async def thread_budget(
        self, caller: Caller, params: m.ThreadBudgetParams
    ) -> m.ThreadBudgetResult:
        thread = await self.ex.threads.get(caller, params.thread_id)
        given = (params.usd, params.soft_usd, params.tokens, params.soft_tokens,
                 params.window_percent, params.soft_window_percent)  # fmt: skip
        at = self.d.clock.now_iso()
        if params.clear:
            if any(v is not None for v in given):
                raise InvalidArgument("clear takes no limits: clear, or set new ones")

            async def clear(tx: Tx) -> None:
                await store.clear_budget(tx, "thread", thread.id)

            await self.d.store.write(clear)
        elif any(v is not None for v in given):
            limits = limits_from(*given)

            async def set_(tx: Tx) -> None:
                await store.set_budget(tx, "thread", thread.id, caller.uid, limits, at)

            await self.d.store.write(set_)
        rows = await store.budget_rows(self.d.store, "thread", [thread.id])
        if not rows:
            return m.ThreadBudgetResult(budget=None)
        windows = await store.windows_of(self.d.store, caller.uid)
        return m.ThreadBudgetResult(
            budget=budget_wire(store.with_window(rows[0], windows, None, self._now()))
        )

    async def listed(self, caller: Caller) -> list[m.Budget]:
        """The caller's budgets with their spend (`alp ps`); the window is the fullest any
        runtime reported."""
        budgets = await store.owned_budgets(self.d.store, caller.uid)
        if not budgets:
            return []
        windows = await store.windows_of(self.d.store, caller.uid)
        now = self._now()
        return [budget_wire(store.with_window(b, windows, None, now)) for b in budgets]

    async def windows(self, caller: Caller) -> list[m.RateWindow]:
        """The subscription windows the caller's runtimes last reported, not reset yet."""
        now = self._now()
        return [
            m.RateWindow(
                runtime=runtime,
                name=w.name,
                used_percent=w.used_percent,
                window_minutes=w.window_minutes,
                resets_at=w.resets_at,
            )
            for runtime, found in (await store.windows_of(self.d.store, caller.uid)).items()
            for w in found
            if w.resets_at is None or w.resets_at > now
        ]

    def _now(self) -> float:
        return self.d.clock.now().timestamp()

    # held

    async def run(self, report: Callable[[m.TaskState], None]) -> None:
        """The holding loop: a pass after each copying sync, and every `INTERVAL`."""
        while True:
            with anyio.move_on_after(INTERVAL):
                await self.spent.wait()
            self.spent = anyio.Event()
            try:
                ended = await self.enforce()
                report(
                    m.TaskState(
                        name="budgets",
                        state="idle",
                        last_run_at=self.d.clock.now_iso(),
                        detail=f"ended {len(ended)} root(s)" if ended else None,
                    )
                )
            except Exception as exc:
                log.exception("budgets_failed")
                report(m.TaskState(name="budgets", state="failing", detail=type(exc).__name__))

    async def enforce(self) -> list[str]:
        """End every running headless root whose thread or schedule is at its hard budget;
        announce soft ones. The ids of the roots ended."""
        roots = [
            r
            for r in await running_headless(self.d.store, self.d.host_id)
            if r.is_root and r.thread_id
        ]
        if not roots:
            self.holding = False
            return []
        budgets = await self._budgets_of(roots)
        self.holding = any(b.limits.hard for b in budgets)
        ended: list[str] = []
        for record in roots:
            mine = await self._with_windows([b for b in budgets if _counts(b, record)], record)
            worst: Level = "ok"
            for budget in mine:
                reached = level(budget.limits, budget.spend)
                worst = worse(worst, reached)
                if reached != "ok":
                    await self._warn(budget, reached, record)
            if worst == "hard":
                log.info("budget_reached", execution=record.id, thread=record.thread_id)
                try:
                    await end_graph(self.ex, record, "budget-exceeded")
                except AlpError:
                    log.exception("budget_end_failed", execution=record.id)
                    continue
                ended.append(record.id)
        return ended

    async def after_settle(self, execution_id: str) -> None:
        """The settle's sync brought the last cost in: announce what it crossed."""
        record = await execution_by_id(self.d.store, execution_id)
        if record is None or not record.is_root or record.thread_id is None:
            return
        counted = [b for b in await self._budgets_of([record]) if _counts(b, record)]
        for budget in await self._with_windows(counted, record):
            reached = level(budget.limits, budget.spend)
            if reached != "ok":
                await self._warn(budget, reached, record)

    async def _budgets_of(self, roots: list[ExecutionRecord]) -> list[StoredBudget]:
        threads = sorted({r.thread_id for r in roots if r.thread_id})
        schedules = sorted({s for r in roots if (s := _schedule_of(r))})
        return [
            *await store.budget_rows(self.d.store, "thread", threads),
            *await store.budget_rows(self.d.store, "schedule", schedules),
        ]

    async def _with_windows(
        self, budgets: list[StoredBudget], record: ExecutionRecord
    ) -> list[StoredBudget]:
        """The budgets with the window of the root's runtime (for its owner), where one of
        them limits the window."""
        if not any(b.limits.window_percent is not None for b in budgets):
            return budgets
        windows = await store.windows_of(self.d.store, record.owner_uid)
        now = self._now()
        return [store.with_window(b, windows, record.runtime, now) for b in budgets]

    async def _warn(self, budget: StoredBudget, reached: Level, record: ExecutionRecord) -> None:
        async def unit(tx: Tx) -> bool:
            return await store.mark_warned(
                tx, budget.scope, budget.target_id, reached, budget.updated_at
            )

        if not await self.d.store.write(unit):
            return  # announced already (or the budget changed since it was read)
        assert record.thread_id is not None
        title = (await find_thread(self.d.store, record.thread_id)).title
        what = describe(budget.scope, budget.limits, budget.spend)
        if reached == "hard":
            message = (
                f"{what}: hard limit reached — the running root is ended (budget-exceeded) and "
                "no new root runs until the budget is raised"
            )
        else:
            message = f"{what}: soft limit reached"
        warning = m.BudgetWarning(
            budget=budget_wire(budget),
            thread_id=record.thread_id,
            execution_id=record.id,
            thread_title=title,
            message=message,
        )
        log.info("budget_warning", scope=budget.scope, target=budget.target_id, level=reached)
        frame = jsonrpc.encode_notification("budget/warning", warning)
        self.d.events.publish("budget/warning", frame, record.thread_id)
        await notify_desktop(f"alp: {title or record.thread_id} — budget", message)
        for listener in self.on_warning:
            try:
                await listener(warning)
            except Exception:
                log.exception("budget_listener_failed")


def _schedule_of(record: ExecutionRecord) -> str | None:
    if record.kind != "scheduled":
        return None
    return _origin.decode(record.origin).schedule_id


def _counts(budget: StoredBudget, record: ExecutionRecord) -> bool:
    if budget.scope == "thread":
        return budget.target_id == record.thread_id
    return budget.target_id == _schedule_of(record)


__all__ = ["BudgetService", "budget_wire", "limits_from"]
