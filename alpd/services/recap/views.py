"""What `thread/recap` shows, and the recap state `daemon/status` reports.

A thread's recap is shown only while it stands (`alpd.store.recap.STANDS`: no clear since it
was made, no undo of a root it read), labelled as derived, beside whether refreshes run and
whether one is running now.
"""

from __future__ import annotations

from typing import Final

from alpd.domain.recap.config import RecapAvailability
from alpd.services.context import Caller
from alpd.services.threads.lifecycle import check_owner
from alpd.store import recap as recaps
from alpd.store.db import Store, Tx
from alpd.store.recap import StoredRecap
from alpd.store.threads.shell import load_thread
from protocol import messages as m

DERIVED_LABEL: Final = "derived from the thread's history by a model; not authority"


async def owned_recap(store: Store, caller: Caller, thread_id: str) -> StoredRecap | None:
    """The caller's thread's recap, if it stands (THREAD_NOT_FOUND, PERMISSION_DENIED)."""

    async def unit(tx: Tx) -> StoredRecap | None:
        check_owner(await load_thread(tx, thread_id), caller)
        return await recaps.standing_recap(tx, thread_id)

    return await store.read_unit(unit)


def recap_state(availability: RecapAvailability) -> m.RecapState:
    return m.RecapState(
        available=availability.available,
        summariser=availability.summariser,
        reason=availability.reason,
        hint=availability.hint,
    )


def recap_view(
    thread_id: str,
    stored: StoredRecap | None,
    availability: RecapAvailability,
    *,
    refreshing: bool,
) -> m.ThreadRecap:
    state = recap_state(availability)
    if stored is None:
        return m.ThreadRecap(thread_id=thread_id, state=state, refreshing=refreshing)
    recap = stored.recap
    return m.ThreadRecap(
        thread_id=thread_id,
        state=state,
        refreshing=refreshing,
        headline=recap.headline,
        gist=recap.gist,
        open_tasks=list(recap.open_tasks),
        source_revision=stored.source_revision,
        made_at=stored.made_at,
        execution_id=stored.execution_id,
        label=DERIVED_LABEL,
    )


__all__ = ["DERIVED_LABEL", "owned_recap", "recap_state", "recap_view"]
