"""Which path a delivery takes.

The store-side half of the path rules in `alpd.domain.conversation.delivery` (`choose_route`),
used inside the submit's transaction: `choose_path` decides from the target's state — the run
a delivery targets (a sub-agent's parent) or else the thread's running root, and whether its
runtime takes text mid-work (`takes_injection` on its adapter; an adapter that does not say,
does not) — and whether the delivery fits one hand-out whole (`fits_injection`).

How one that could not take its path falls back (the note a round records on it, the
deliveries of a root never started going back to the queue) is in
`alpd.store.conversation.delivery` (`claim_round`, `requeue_unstarted`).
"""

from __future__ import annotations

from alpd.domain.conversation.delivery import Route, choose_route
from alpd.runtimes.registry import adapters
from alpd.store.conversation.delivery import unsettled_runtime
from alpd.store.db import Tx


async def choose_path(tx: Tx, thread_id: str, target: str | None, *, fits: bool) -> Route:
    """The path a new delivery takes: into the run it targets (or the thread's running root)
    when its runtime takes text mid-work and the delivery `fits` a hand-out whole, else a
    round after it, else a root of its own."""
    runtime = await unsettled_runtime(tx, thread_id, target)
    if runtime is None and target is not None:
        return await choose_path(tx, thread_id, None, fits=fits)
    adapter = adapters().get(runtime) if runtime is not None else None
    takes = fits and bool(getattr(adapter, "takes_injection", False))
    return choose_route(busy=runtime is not None, takes_injection=takes)


__all__ = ["choose_path"]
