"""A thread named the way a person names it: by its id, or by its title.

`alp handoff build -- …` should not need an id. A title is matched among the caller's
threads that are not archived: exactly first, then ignoring case; when several threads
match, open ones are preferred, and if that still leaves more than one the answer is an
error listing them (with their ids, to pick one). No match is THREAD_NOT_FOUND listing the
titles that contain the words given, if any.
"""

from __future__ import annotations

from typing import Final

from alpd.domain.ids import THREAD_PREFIX, has_prefix
from alpd.errors import InvalidArgument, ThreadNotFound
from alpd.store.db import Store
from alpd.store.threads.refs import NamedThread, named_thread, threads_titled, titles_containing

#: how many candidates an error lists
CANDIDATES_MAX: Final = 10


def _candidate(thread: NamedThread) -> dict[str, str | None]:
    return {"id": thread.id, "title": thread.title, "status": thread.status}


def _listing(threads: list[NamedThread]) -> str:
    return "; ".join(f"{t.id} {t.title!r} ({t.status})" for t in threads)


async def resolve_thread(store: Store, uid: int, ref: str) -> NamedThread:
    """The thread `ref` names (id: any owner, the caller checks; title: the caller's)."""
    if has_prefix(ref, THREAD_PREFIX):
        thread = await named_thread(store, ref)
        if thread is None:
            raise ThreadNotFound(
                f"no thread {ref!r}; `alp thread list --all` shows yours", threadId=ref
            )
        return thread
    for ignore_case in (False, True):
        rows = await threads_titled(
            store, uid, ref, ignore_case=ignore_case, limit=CANDIDATES_MAX + 1
        )
        if not rows:
            continue
        open_rows = [r for r in rows if r.status == "open"] or rows
        if len(open_rows) == 1:
            return open_rows[0]
        shown = open_rows[:CANDIDATES_MAX]
        raise InvalidArgument(
            f"{len(open_rows)} threads are titled {ref!r}: {_listing(shown)}; name one by its id",
            title=ref,
            candidates=[_candidate(r) for r in shown],
        )
    near = await titles_containing(store, uid, ref, limit=CANDIDATES_MAX)
    hint = f"; titles that contain it: {_listing(near)}" if near else ""
    raise ThreadNotFound(
        f"no thread titled {ref!r}{hint}; `alp thread list --all` shows yours",
        title=ref,
        candidates=[_candidate(r) for r in near],
    )


__all__ = ["CANDIDATES_MAX", "resolve_thread"]
