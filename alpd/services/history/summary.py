"""What a thread's history holds and what a run cost: completeness levels (`LEVEL_ORDER`,
`history_level`), the thread's summary (`thread_history`), the price of usage
(`price_cost`)."""

from __future__ import annotations

from typing import Final

from alpd.domain.runs.agents import ModelPrice
from alpd.store.db import Store
from alpd.store.history.threads import thread_history_rows
from protocol import messages as m

__all__ = ["LEVEL_ORDER", "history_level", "price_cost", "thread_history"]


def price_cost(usage: m.Usage, model: str | None, prices: dict[str, ModelPrice]) -> float | None:
    """USD for `usage` at the configured price of `model` (exact name, else the longest
    configured name contained in it: `sonnet` prices `claude-sonnet-4-5`)."""
    if not prices or not model:
        return None
    price = prices.get(model)
    if price is None:
        names = [name for name in prices if name in model]
        if not names:
            return None
        price = prices[max(names, key=len)]
    total = (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_read_tokens * price.cache_read
        + usage.cache_creation_tokens * price.cache_write
    )
    return round(total / 1_000_000, 6)


#: worst first: complete > partial > final-only > unsupported, the less history a level
#: keeps the worse it is. `pending` (a settled root whose copy has not finished) is known to
#: be no worse than complete only, so it shows when everything else is complete.
LEVEL_ORDER: Final[tuple[m.HistoryLevel, ...]] = (
    "unsupported",
    "final-only",
    "partial",
    "pending",
    "complete",
)


def history_level(levels: list[m.HistoryLevel]) -> m.HistoryLevel:
    """The worst of `levels` in `LEVEL_ORDER` (a thread's level from its settled roots');
    `complete` if none."""
    if not levels:
        return "complete"
    return min(levels, key=LEVEL_ORDER.index)


async def thread_history(store: Store, thread_id: str) -> m.HistorySummary:
    """Level (worst of the settled roots'), entry counts and links of a thread's roots."""
    found = await thread_history_rows(store, thread_id)
    by_root = [
        m.RootHistory(
            execution_id=r.execution_id,
            level=r.level or "pending",
            entries=r.entries,
            skipped=r.skipped,
            links_to=r.links_to,
            link_kind=r.link_kind,
        )
        for r in found.roots
    ]
    levels: list[m.HistoryLevel] = [
        r.level or "pending" for r in found.roots if r.status == "settled"
    ]
    return m.HistorySummary(
        level=history_level(levels),
        entries=found.entries,
        roots=len(found.roots),
        by_root=by_root,
    )
