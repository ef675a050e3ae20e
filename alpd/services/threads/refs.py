"""A thread named the way a person names it: by its id, or by its title.

`alp handoff build -- …` should not need an id. A title is matched among the caller's
threads that are not archived: exactly first, then ignoring case; when several threads
match, open ones are preferred, and if that still leaves more than one the answer is an
error listing them (with their ids, to pick one). No match is THREAD_NOT_FOUND listing the
titles that contain the words given, if any.
"""

from __future__ import annotations

import sqlite3
from typing import Final

from alpd.domain.ids import THREAD_PREFIX, has_prefix
from alpd.errors import InvalidArgument, ThreadNotFound
from alpd.store.db import Store

#: how many candidates an error lists
CANDIDATES_MAX: Final = 10

_COLUMNS = "id, owner_uid, title, status, workspace, updated_at"


def _candidate(row: sqlite3.Row) -> dict[str, str | None]:
    return {"id": row["id"], "title": row["title"], "status": row["status"]}


def _listing(rows: list[sqlite3.Row]) -> str:
    return "; ".join(f"{r['id']} {r['title']!r} ({r['status']})" for r in rows)


async def resolve_thread(store: Store, uid: int, ref: str) -> sqlite3.Row:
    """The thread `ref` names (id: any owner, the caller checks; title: the caller's)."""
    if has_prefix(ref, THREAD_PREFIX):
        row = await store.fetchone(f"SELECT {_COLUMNS} FROM threads WHERE id = ?", (ref,))
        if row is None:
            raise ThreadNotFound(
                f"no thread {ref!r}; `alp thread list --all` shows yours", threadId=ref
            )
        return row
    for clause in ("title = ?", "lower(title) = lower(?)"):
        rows = await store.fetchall(
            f"SELECT {_COLUMNS} FROM threads WHERE owner_uid = ? AND status != 'archived' "
            f"AND {clause} ORDER BY updated_at DESC LIMIT ?",
            (uid, ref, CANDIDATES_MAX + 1),
        )
        if not rows:
            continue
        open_rows = [r for r in rows if r["status"] == "open"] or rows
        if len(open_rows) == 1:
            return open_rows[0]
        shown = open_rows[:CANDIDATES_MAX]
        raise InvalidArgument(
            f"{len(open_rows)} threads are titled {ref!r}: {_listing(shown)}; name one by its id",
            title=ref,
            candidates=[_candidate(r) for r in shown],
        )
    near = await store.fetchall(
        f"SELECT {_COLUMNS} FROM threads WHERE owner_uid = ? AND status != 'archived' "
        "AND instr(lower(title), lower(?)) > 0 ORDER BY updated_at DESC LIMIT ?",
        (uid, ref, CANDIDATES_MAX),
    )
    hint = f"; titles that contain it: {_listing(near)}" if near else ""
    raise ThreadNotFound(
        f"no thread titled {ref!r}{hint}; `alp thread list --all` shows yours",
        title=ref,
        candidates=[_candidate(r) for r in near],
    )


__all__ = ["CANDIDATES_MAX", "resolve_thread"]
