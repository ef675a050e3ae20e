"""A thread named the way a person names it — the one resolver every door goes through.

A name is tried in this order, the first rule that matches deciding:
1. a whole id (`thread_` and 26 characters): that thread, whoever owns it (the method
   checks ownership with its own error); no lookup when only the id is needed;
2. `@last`: the caller's thread written last (its `updated_at`: a continue, a settle, a
   push, a clear …) whose workspace is the caller's working directory or one above it. The
   caller's directory is the kernel's (`/proc/PID/cwd` of the peer), never message text; a
   caller without one (the web page, which acts as alpd) takes every workspace;
3. the exact title, then the title ignoring case, among the caller's threads that are not
   archived; when several match, open ones are preferred;
4. a unique prefix of an id: `thread_01jx…`, or the part after `thread_` (4 characters at
   least), among all the caller's threads.
Several matches is THREAD_AMBIGUOUS, `data.candidates` listing them (id, title, status; at
most CANDIDATES_MAX). None is THREAD_NOT_FOUND listing the titles that contain the words
given, else the titles close to it (`did you mean`: a letter or two wrong, missing or
swapped; `alpd.domain.threads.names`, over the owner's newest `TITLES_COMPARED` titles), in
the message and in `data.candidates`, and saying where the list is.

Applied at the dispatch boundary to every `threadId` param (`resolve_params`), so each
method takes every name without knowing of names; `handoff/send` (`target`, `from`) and
`inbox/list` (`thread`) call `resolve_thread` themselves, as they need more than the id.
"""

from __future__ import annotations

import os
import re
from pathlib import PurePosixPath
from typing import Final, TypeVar

import msgspec

from alpd.domain.ids import THREAD_PREFIX, has_prefix
from alpd.domain.threads.names import TITLES_COMPARED, close_titles
from alpd.errors import ThreadAmbiguous, ThreadNotFound
from alpd.services.context import Caller
from alpd.store.db import Store
from alpd.store.threads.refs import (
    NamedThread,
    ids_starting,
    last_touched,
    named_thread,
    recent_titled,
    threads_titled,
    titles_containing,
)

#: how many candidates an error lists
CANDIDATES_MAX: Final = 10
#: the name of the caller's most recently touched thread
LAST: Final = "@last"
#: a bare id tail taken as a prefix: 4 characters at least (fewer are mostly the clock)
_ID_TAIL: Final = re.compile(r"[0-9a-hjkmnp-tv-z]{4,26}")
#: how many directories up from the caller's a workspace may be, for @last
_DEPTH_MAX: Final = 64
_LIST_HINT: Final = "`alp thread list --all` shows yours"

P = TypeVar("P", bound=msgspec.Struct)


def _candidate(thread: NamedThread) -> dict[str, str | None]:
    return {"id": thread.id, "title": thread.title, "status": thread.status}


def _listing(threads: list[NamedThread]) -> str:
    return "; ".join(f"{t.id} {t.title!r} ({t.status})" for t in threads)


def _ambiguous(ref: str, what: str, rows: list[NamedThread]) -> ThreadAmbiguous:
    shown = rows[:CANDIDATES_MAX]
    more = "+" if len(rows) > CANDIDATES_MAX else ""
    return ThreadAmbiguous(
        f"{len(shown)}{more} threads {what} {ref!r}: {_listing(shown)}; name one by its id",
        ref=ref,
        candidates=[_candidate(r) for r in shown],
    )


def caller_workspace(caller: Caller) -> str | None:
    """The caller's working directory, from the kernel; None for alpd itself (the web page)
    or a process whose directory cannot be read."""
    if caller.pid in (0, os.getpid()):
        return None
    try:
        return os.readlink(f"/proc/{caller.pid}/cwd")
    except OSError:
        return None


def _workspaces(cwd: str) -> list[str]:
    path = PurePosixPath(cwd)
    return [str(p) for p in (path, *path.parents)][:_DEPTH_MAX]


async def _last(store: Store, caller: Caller) -> NamedThread:
    cwd = caller_workspace(caller)
    thread = await last_touched(store, caller.uid, None if cwd is None else _workspaces(cwd))
    if thread is None:
        where = f"in {cwd} or above it" if cwd else "of yours"
        raise ThreadNotFound(
            f"no thread {where} for {LAST}; start one with `alp`, or {_LIST_HINT}",
            ref=LAST,
            workspace=cwd,
        )
    return thread


async def resolve_thread(store: Store, caller: Caller, ref: str) -> NamedThread:
    """The thread `ref` names (an id: any owner, the caller checks; else the caller's)."""
    if has_prefix(ref, THREAD_PREFIX):
        thread = await named_thread(store, ref)
        if thread is None:
            raise ThreadNotFound(f"no thread {ref!r}; {_LIST_HINT}", threadId=ref, ref=ref)
        return thread
    if ref == LAST:
        return await _last(store, caller)
    for ignore_case in (False, True):
        rows = await threads_titled(
            store, caller.uid, ref, ignore_case=ignore_case, limit=CANDIDATES_MAX + 1
        )
        if rows:
            open_rows = [r for r in rows if r.status == "open"] or rows
            if len(open_rows) == 1:
                return open_rows[0]
            raise _ambiguous(ref, "are titled", open_rows)
    prefix = _id_prefix(ref)
    if prefix is not None:
        rows = await ids_starting(store, caller.uid, prefix, limit=CANDIDATES_MAX + 1)
        if len(rows) == 1:
            return rows[0]
        if rows:
            raise _ambiguous(ref, "have ids starting with", rows)
    near = await titles_containing(store, caller.uid, ref, limit=CANDIDATES_MAX)
    hint = f"; titles that contain it: {_listing(near)}" if near else ""
    if not near:
        near = await _close_titled(store, caller, ref)
        hint = f"; did you mean {_listing(near)}?" if near else ""
    raise ThreadNotFound(
        f"no thread named {ref!r} (an id, an id prefix, a title or {LAST}){hint}; {_LIST_HINT}",
        ref=ref,
        candidates=[_candidate(r) for r in near],
    )


async def _close_titled(store: Store, caller: Caller, ref: str) -> list[NamedThread]:
    """The caller's threads whose title is close to `ref` (a mistyped title), closest first."""
    rows = await recent_titled(store, caller.uid, limit=TITLES_COMPARED)
    chosen = close_titles(ref, [row.title or "" for row in rows], limit=CANDIDATES_MAX)
    return [rows[index] for index in chosen]


def _id_prefix(ref: str) -> str | None:
    lowered = ref.lower()
    if lowered.startswith(THREAD_PREFIX) and len(lowered) > len(THREAD_PREFIX):
        return lowered
    if _ID_TAIL.fullmatch(lowered):
        return THREAD_PREFIX + lowered
    return None


async def resolve_thread_id(store: Store, caller: Caller, ref: str) -> str:
    """The id of the thread `ref` names; a whole id is returned as it is, unread."""
    if has_prefix(ref, THREAD_PREFIX):
        return ref
    return (await resolve_thread(store, caller, ref)).id


async def resolve_params(store: Store, caller: Caller, params: P) -> P:
    """`params` with its `thread_id` (when it has one, and it is a name) replaced by the id."""
    ref = getattr(params, "thread_id", None)
    if not isinstance(ref, str) or not ref or has_prefix(ref, THREAD_PREFIX):
        return params
    thread_id = await resolve_thread_id(store, caller, ref)
    return msgspec.structs.replace(params, thread_id=thread_id)


__all__ = [
    "CANDIDATES_MAX",
    "LAST",
    "caller_workspace",
    "resolve_params",
    "resolve_thread",
    "resolve_thread_id",
]
