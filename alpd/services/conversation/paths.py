"""Which path a delivery takes.

The store-side half of the path rules in `alpd.domain.conversation.delivery` (`choose_route`),
used inside the submit's transaction: `choose_path` decides from the target's state — the run
a delivery targets (a sub-agent's parent) or else the thread's running root; whether it takes
text mid-work (`takes_injection` on its runtime's adapter, or the run has asked
`delivery/pending` itself); whether it said not to be interrupted (`delivery/hold`) — and
whether the delivery fits one hand-out whole (`fits_injection`).

How one that could not take its path falls back (the note a round records on it, the
deliveries of a root never started going back to the queue) is in
`alpd.store.conversation.delivery` (`claim_round`, `requeue_unstarted`).
"""

from __future__ import annotations

from alpd.domain.conversation.delivery import Route, choose_route
from alpd.runtimes.registry import adapters
from alpd.store.conversation.delivery import unsettled_run
from alpd.store.db import Tx


async def choose_path(tx: Tx, thread_id: str, target: str | None, *, fits: bool) -> Route:
    """The path a new delivery takes, by the state of the run it targets (or the thread's
    running root): into it when it takes text mid-work — its runtime has a hook, or it has
    asked `delivery/pending` itself — and did not say to hold, and the delivery `fits` a
    hand-out whole; else a round after it; else (idle) a root of its own."""
    run = await unsettled_run(tx, thread_id, target)
    if run is None and target is not None:
        return await choose_path(tx, thread_id, None, fits=fits)
    if run is None:
        return choose_route(busy=False, takes_injection=False)
    adapter = adapters().get(run.runtime)
    takes = fits and (run.asked or bool(getattr(adapter, "takes_injection", False)))
    return choose_route(busy=True, takes_injection=takes, held=run.held)


__all__ = ["choose_path"]
