"""Guard rails held: a run past its time limit or at its cost cap is ended.

Each pass (the reconciler's, every 2 s) reads the running runs alpd supervises, re-hashes
each one's policy (the limits are in it: `timeoutSeconds`, `budgetUsd`, policy version 4)
and asks `alpd.domain.runs.limits.limit_hit` with the time since it started and the cost the
history sync last read from its transcript (it reads a running run's transcript every tick,
as `alp ps` shows). A run that reached one is ended like a cancel — the supervisor's
terminate path, SIGTERM to its cgroup or tree, a grace, then SIGKILL — and settles
`timed-out` or `budget-exceeded`; runs it delegated settle `cancelled`.

Interactive runs are the person's terminal: no limit ends them (the person is there).
"""

from __future__ import annotations

from datetime import datetime

import msgspec
import structlog

from alpd.domain.runs.limits import LimitOutcome, RunLimits, limit_hit
from alpd.errors import AlpError
from alpd.services.runs.executions import Executions
from alpd.services.runs.graph import end_graph
from alpd.services.runs.rows import verified_policy
from alpd.store.runs import running_headless
from protocol import messages as m

log = structlog.get_logger("alpd.runs")

_usage = msgspec.json.Decoder(m.Usage)


def tokens_of(usage: str | None) -> int:
    """Input + output + cache tokens of a stored usage (as `alp ps` counts them)."""
    if not usage:
        return 0
    u = _usage.decode(usage)
    return u.input_tokens + u.output_tokens + u.cache_read_tokens + u.cache_creation_tokens


async def enforce_limits(ex: Executions) -> list[tuple[str, LimitOutcome]]:
    """End every running run past one of its limits; (execution id, outcome) of each."""
    now = ex.d.clock.now()
    ended: list[tuple[str, LimitOutcome]] = []
    for record in await running_headless(ex.d.store, ex.d.host_id):
        try:
            policy = verified_policy(record)
        except AlpError:
            continue  # a tampered policy decides nothing; settle and show say so
        limits = policy.limits
        if limits == RunLimits():
            continue
        started = datetime.fromisoformat(record.started_at or record.created_at)
        hit = limit_hit(
            limits,
            running_seconds=(now - started).total_seconds(),
            cost_usd=record.cost_usd,
            tokens=tokens_of(record.usage),
        )
        if hit is None:
            continue
        log.info(
            "run_limit_reached",
            execution=record.id,
            outcome=hit,
            timeout_seconds=policy.timeout_seconds,
            budget_usd=policy.budget_usd,
            budget_tokens=policy.budget_tokens,
            cost_usd=record.cost_usd,
        )
        await end_graph(ex, record, hit)
        ended.append((record.id, hit))
    return ended


__all__ = ["enforce_limits", "tokens_of"]
