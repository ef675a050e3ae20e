"""`thread/transcript`: a thread's conversation, a page at a time, and its live items.

A page is one unit of reads (`alpd.store.history.transcript.read_page`: the owner check,
every bounded read), run on the event loop's thread with no hop (`Store.read_inline`), then
its digest checks (`page_rows`) and a pure build (`alpd.domain.history.transcript.build_page`).
Those two are functions of the read alone, so a page is made once for a read: the pages made
are kept (`PAGES_KEPT` characters of reads), each with the read it was made from, and a read
equal to a kept one in every value — each column of each row, the digests among them — gives
the kept page. The statements still run for every page; a view read again, or by several
readers, costs them and one comparison. Live: after the history sync copies new
entries of a root (every second while it runs, `alpd.background.history_sync`;
`publish_after`), and after a report is written (`publish_report`), subscribers of
`thread/transcript` get the new items. Items are built only when someone listens; a copy
always notes where it starts (one indexed max()), so a reader who subscribes while it runs
is still told what it added.
"""

from __future__ import annotations

from functools import partial
from typing import Final

import structlog

from alpd.domain.history.transcript import (
    ENTRY_PHASE,
    REPORT_PHASE,
    CursorInvalidError,
    Key,
    build_page,
    page_bound,
)
from alpd.domain.verified_reads import VerifiedReads
from alpd.errors import InvalidArgument
from alpd.services.context import Caller, Daemon
from alpd.store.history.transcript import PageQuery, PageRead, page_rows, read_page, read_weight
from alpd.store.history.transcript_live import RootPlace, root_of, root_place
from protocol import jsonrpc
from protocol import messages as m

__all__ = ["LIVE_MAX_ITEMS", "PAGES_KEPT", "TranscriptService"]

#: items of one `thread/transcript` notification at most (a sync that copied more sends the
#: newest; a reader pages back for the rest)
LIVE_MAX_ITEMS: Final = 200
#: characters of page reads kept with the pages made from them (`read_weight`): some twenty
#: pages of a hundred items
PAGES_KEPT: Final = 2 << 20

log = structlog.get_logger("alpd.history")


def _made(asked: tuple[PageRead, bool]) -> m.TranscriptResult:
    read, full = asked
    q = read.query
    return build_page(q.thread_id, page_rows(read), q.direction, q.bound, q.limit, full=full)


class TranscriptService:
    def __init__(self, daemon: Daemon) -> None:
        self.d = daemon
        #: the pages made, by what was asked, with the read each was made from (shared by
        #: every reader: a page is never changed once made)
        self.pages: VerifiedReads[tuple[PageQuery, bool], tuple[PageRead, bool], m.TranscriptResult]
        self.pages = VerifiedReads(_made, lambda asked: read_weight(asked[0]), PAGES_KEPT)

    async def page(self, caller: Caller, params: m.TranscriptParams) -> m.TranscriptResult:
        if not 1 <= params.limit <= m.TRANSCRIPT_MAX_LIMIT:
            raise InvalidArgument(f"limit must be 1..{m.TRANSCRIPT_MAX_LIMIT}", limit=params.limit)
        try:
            direction, bound = page_bound(params.before, params.after)
        except CursorInvalidError as exc:
            raise InvalidArgument(
                "the cursor is not one thread/transcript gave: pass back `previous`, `next` "
                "or an item's `cursor` as it came (or none, for the newest page)",
                cursor=str(exc),
            ) from exc
        query = PageQuery(
            thread_id=params.thread_id,
            uid=caller.uid,
            direction=direction,
            bound=bound,
            limit=params.limit,
            root=params.root,
            since=params.since,
        )
        # No hop: the page's reads are bounded (by indexes, LIMIT and `limit`), and the hop
        # to the reader's thread cost as much as they do (`Store.read_inline`).
        read = await self.d.store.read_inline(partial(read_page, query=query))
        return self.pages((query, params.full), (read, params.full))

    def listened(self, thread_id: str) -> bool:
        return self.d.events.wanted("thread/transcript", thread_id)

    async def publish_after(self, execution_id: str, after_entry: int) -> None:
        """Tell subscribers the items of `execution_id`'s root after its entry `after_entry`
        (its new entries, then its reports and handoffs): called after a copy added some."""
        where = await root_of(self.d.store, execution_id)
        if where is not None:
            await self._publish(where, (where.sequence, ENTRY_PHASE, after_entry))

    async def publish_report(self, report: m.Report) -> None:
        """Tell subscribers a report's item (a root's, or a sub-agent's in its root), and
        whatever of its root comes after it: called once the report is written."""
        if not self.listened(report.thread_id):
            return
        where = await root_place(self.d.store, report.execution_id)
        if where is not None:
            await self._publish(where, (where.sequence, REPORT_PHASE, report.id - 1))

    async def _publish(self, where: RootPlace, bound: Key) -> None:
        if not self.listened(where.thread_id):
            return
        query = PageQuery(
            thread_id=where.thread_id,
            uid=where.owner_uid,
            direction="after",
            bound=bound,
            limit=LIVE_MAX_ITEMS,
            root=where.sequence,
        )
        read = await self.d.store.read(partial(read_page, query=query))
        page = build_page(where.thread_id, page_rows(read), "after", query.bound, LIVE_MAX_ITEMS)
        if not page.items:
            return
        note = m.TranscriptItems(thread_id=where.thread_id, items=page.items, roots=page.roots)
        frame = jsonrpc.encode_notification("thread/transcript", note)
        self.d.events.publish("thread/transcript", frame, where.thread_id)
