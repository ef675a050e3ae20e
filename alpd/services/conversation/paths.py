"""Which path a delivery takes, and how one that could not take it falls back.

The store-side half of the path rules in `alpd.domain.conversation.delivery` (`choose_route`), used
inside the delivery service's transactions:

- `choose_path`: at submit, from the target's state — the run a delivery targets (a
  sub-agent's parent) or else the thread's running root, and whether its runtime takes text
  mid-work (`takes_injection` on its adapter; an adapter that does not say, does not) — and
  whether the delivery fits one hand-out whole (`fits_injection`);
- `FALLBACK_NOTE`: what a round records on a delivery it carries that was meant for the
  live run (handed out but never acknowledged, or never asked for);
- `requeue_unstarted`: deliveries of a round whose root was reserved but never started go
  back to the queue.
"""

from __future__ import annotations

from typing import Final

import aiosqlite

from alpd.domain.conversation.delivery import Route, choose_route
from alpd.runtimes.registry import adapters
from alpd.store.db import Unit

#: why a round carries a delivery that was meant for another path (SQL over the row)
FALLBACK_NOTE: Final = (
    "CASE WHEN lease_execution_id IS NOT NULL THEN 'handed to ' || lease_execution_id || "
    "' by its hook, never acknowledged; delivered by this round' "
    "WHEN route = 'inject' THEN 'offered to the running root, which ended before its hook "
    "took it; delivered by this round' END"
)


async def choose_path(
    conn: aiosqlite.Connection, thread_id: str, target: str | None, *, fits: bool
) -> Route:
    """The path a new delivery takes: into the run it targets (or the thread's running root)
    when its runtime takes text mid-work and the delivery `fits` a hand-out whole, else a
    round after it, else a root of its own."""
    async with conn.execute(
        "SELECT runtime FROM executions WHERE status != 'settled' AND "
        + ("id = ?" if target else "thread_id = ? AND is_root = 1"),
        (target or thread_id,),
    ) as cur:
        running = await cur.fetchone()
    if running is None and target is not None:
        return await choose_path(conn, thread_id, None, fits=fits)
    adapter = adapters().get(running["runtime"]) if running is not None else None
    takes = fits and bool(getattr(adapter, "takes_injection", False))
    return choose_route(busy=running is not None, takes_injection=takes)


def requeue_unstarted(execution_id: str | None) -> Unit[int]:
    """A store unit: deliveries of rounds whose root was reserved but never started (settled
    `interrupted` with no process ever recorded: alpd was killed between the reservation and
    the spawn) go back to the queue, for the next round; how many. Of one root, or (None) of
    all: the sweep makes good a stop between that settle and this write. A scheduled fire
    whose schedule already has another fire waiting is not re-queued (`OR IGNORE` on the
    coalescing index): that one stands for both, as for any fire that finds its thread busy."""
    scope, args = ("= ?", (execution_id,)) if execution_id else ("IS NOT NULL", ())

    async def unit(conn: aiosqlite.Connection) -> int:
        cur = await conn.execute(
            "UPDATE OR IGNORE deliveries SET status = 'queued', execution_id = NULL, "
            "delivered_at = NULL, how = NULL, note = 'root ' || execution_id || "
            "' was reserved for it but never started (alpd stopped first); re-queued' "
            f"WHERE status = 'delivered' AND execution_id {scope} AND execution_id IN ("
            "SELECT id FROM executions WHERE is_root = 1 AND headless = 1 AND pid IS NULL "
            "AND status = 'settled' AND outcome = 'interrupted')",
            args,
        )
        return cur.rowcount

    return unit


__all__ = ["FALLBACK_NOTE", "choose_path", "requeue_unstarted"]
