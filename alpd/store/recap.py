"""SQL over `recaps`, `recap_failures` and `root_derived` (migrations V13, V14), and the few
facts of threads and executions a recap's refresh and a new root's derived context read.

`STANDS` is the rule of `alpd.services.recap.entries` in SQL: a recap made before a clear,
or one that read a root since undone, no longer stands. It is not shown, not given to new
roots, and the next refresh starts over from what may still be read instead of building on
it. Each function runs inside its caller's unit of work (`Tx`), in the caller's order; a
refresh stores its recap, clears its failures and reads whether it stands in one unit.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

import msgspec

from alpd.domain.recap.summary import Recap
from alpd.store.db import Store, Tx
from protocol import messages as m

__all__ = [
    "STANDS",
    "STOOD_BEFORE",
    "Failures",
    "RecapThread",
    "SettledExecution",
    "StoredRecap",
    "clear_recap_failures",
    "count_recap_failure",
    "insert_root_derived",
    "mark_running",
    "recap_lapsed",
    "recap_of_thread",
    "recap_thread",
    "root_at_sequence",
    "set_usage",
    "settled_execution",
    "settled_roots",
    "standing_headline",
    "standing_recap",
    "store_recap",
]

#: the steps that undo a recap (`r`): a clear after it, an undo of a root it read
_AGAINST = (
    "SELECT 1 FROM context_steps s LEFT JOIN executions u ON u.id = s.execution_id "
    "WHERE s.thread_id = r.thread_id AND s.revision > r.source_revision "
    "AND (s.kind = 'clear' OR u.sequence <= r.roots)"
)
#: a recap (`r`) stands while no clear came after it and no root it read was undone
STANDS = f"NOT EXISTS ({_AGAINST})"
#: whether it stood before the context revision given as the parameter (only older steps
#: count): a step at revision n made it lapse when it stood before n and not before n + 1
STOOD_BEFORE = f"NOT EXISTS ({_AGAINST} AND s.revision < ?)"


@dataclass(frozen=True, slots=True)
class StoredRecap:
    """A thread's stored recap; `stands` as `STANDS` says (always true when read by
    `standing_recap`)."""

    recap: Recap
    source_revision: int
    recap_entry_id: int
    roots: int
    execution_id: str
    digest: str
    made_at: str
    stands: bool


def _stored(row: sqlite3.Row, *, stands: bool) -> StoredRecap:
    return StoredRecap(
        recap=Recap(
            headline=row["headline"],
            gist=row["gist"],
            open_tasks=tuple(msgspec.json.decode(row["open_tasks"], type=list[str])),
        ),
        source_revision=row["source_revision"],
        recap_entry_id=int(row["recap_entry_id"]),
        roots=row["roots"],
        execution_id=row["execution_id"],
        digest=row["digest"],
        made_at=row["made_at"],
        stands=stands,
    )


@dataclass(frozen=True, slots=True)
class RecapThread:
    """What a refresh reads of its thread."""

    owner_uid: int
    status: str
    title: str | None
    context_revision: int


@dataclass(frozen=True, slots=True)
class Failures:
    """Failed refreshes of a thread in a row, and when the last one failed."""

    failures: int
    failed_at: str


@dataclass(frozen=True, slots=True)
class SettledExecution:
    """What a settle's follow-up reads of the execution."""

    thread_id: str | None
    is_root: bool
    #: a transcript to copy into the history (a path, or a native session to find it by)
    has_transcript: bool


# a refresh's reads


async def settled_execution(store: Store, execution_id: str) -> SettledExecution | None:
    row = await store.fetchone(
        "SELECT thread_id, is_root, kind, transcript_path, native_session_id "
        "FROM executions WHERE id = ?",
        (execution_id,),
    )
    if row is None:
        return None
    return SettledExecution(
        thread_id=row["thread_id"],
        is_root=bool(row["is_root"]),
        has_transcript=bool(row["transcript_path"] or row["native_session_id"]),
    )


async def recap_thread(tx: Tx, thread_id: str) -> RecapThread | None:
    async with tx.execute("SELECT * FROM threads WHERE id = ?", (thread_id,)) as cur:
        row = await cur.fetchone()
    if row is None:
        return None
    return RecapThread(
        owner_uid=row["owner_uid"],
        status=row["status"],
        title=row["title"],
        context_revision=row["context_revision"],
    )


async def recap_of_thread(tx: Tx, thread_id: str) -> StoredRecap | None:
    """The thread's recap, standing or not."""
    async with tx.execute(
        f"SELECT r.*, {STANDS} AS stands FROM recaps r WHERE r.thread_id = ?",
        (thread_id,),
    ) as cur:
        row = await cur.fetchone()
    return None if row is None else _stored(row, stands=bool(row["stands"]))


async def settled_roots(tx: Tx, thread_id: str) -> int:
    """The sequence of the thread's newest settled root (0: none)."""
    async with tx.execute(
        "SELECT coalesce(max(sequence), 0) FROM executions "
        "WHERE thread_id = ? AND is_root = 1 AND status = 'settled'",
        (thread_id,),
    ) as cur:
        row = await cur.fetchone()
    assert row is not None  # an aggregate always has its row
    return int(row[0])


async def recap_failures(tx: Tx, thread_id: str) -> Failures | None:
    async with tx.execute(
        "SELECT failures, failed_at FROM recap_failures WHERE thread_id = ?", (thread_id,)
    ) as cur:
        row = await cur.fetchone()
    return None if row is None else Failures(failures=row["failures"], failed_at=row["failed_at"])


# a refresh's writes


async def store_recap(
    tx: Tx,
    thread_id: str,
    recap: Recap,
    *,
    source_revision: int,
    recap_entry_id: int,
    roots: int,
    execution_id: str,
    digest: str,
    made_at: str,
) -> None:
    """The thread's recap, replacing the one it had."""
    await tx.execute(
        "INSERT OR REPLACE INTO recaps (thread_id, headline, gist, open_tasks, "
        "source_revision, recap_entry_id, roots, execution_id, digest, made_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            thread_id,
            recap.headline,
            recap.gist,
            msgspec.json.encode(list(recap.open_tasks)).decode(),
            source_revision,
            recap_entry_id,
            roots,
            execution_id,
            digest,
            made_at,
        ),
    )


async def clear_recap_failures(tx: Tx, thread_id: str) -> None:
    await tx.execute("DELETE FROM recap_failures WHERE thread_id = ?", (thread_id,))


async def count_recap_failure(tx: Tx, thread_id: str, at: str) -> int:
    """One more failed refresh in a row, at `at`; how many there are now."""
    async with tx.execute(
        "INSERT INTO recap_failures (thread_id, failures, failed_at) VALUES (?, 1, ?) "
        "ON CONFLICT (thread_id) DO UPDATE SET failures = failures + 1, "
        "failed_at = excluded.failed_at RETURNING failures",
        (thread_id, at),
    ) as cur:
        row = await cur.fetchone()
    return int(row[0]) if row is not None else 1


# whether a recap stands


async def standing_recap(tx: Tx, thread_id: str) -> StoredRecap | None:
    """The thread's recap if it stands."""
    async with tx.execute(
        f"SELECT * FROM recaps r WHERE r.thread_id = ? AND {STANDS}", (thread_id,)
    ) as cur:
        row = await cur.fetchone()
    return None if row is None else _stored(row, stands=True)


async def standing_headline(tx: Tx, thread_id: str) -> str | None:
    """The headline of the thread's recap if it stands."""
    async with tx.execute(
        f"SELECT r.headline FROM recaps r WHERE r.thread_id = ? AND {STANDS}", (thread_id,)
    ) as cur:
        row = await cur.fetchone()
    return None if row is None else str(row["headline"])


async def recap_lapsed(tx: Tx, thread_id: str, revision: int) -> bool:
    """Whether the step at context `revision` made the thread's recap lapse (it stood before
    that revision and not after it)."""
    async with tx.execute(
        f"SELECT {STOOD_BEFORE} AS before, {STOOD_BEFORE} AS after "
        "FROM recaps r WHERE r.thread_id = ?",
        (revision, revision + 1, thread_id),
    ) as cur:
        row = await cur.fetchone()
    return row is not None and bool(row["before"]) and not row["after"]


# the summarisers' temp executions


async def set_usage(tx: Tx, execution_id: str, usage: m.Usage | None, cost: float | None) -> None:
    await tx.execute(
        "UPDATE executions SET usage = ?, cost_usd = ? WHERE id = ?",
        (msgspec.json.encode(usage).decode() if usage else None, cost, execution_id),
    )


async def mark_running(tx: Tx, execution_id: str, at: str) -> None:
    await tx.execute(
        "UPDATE executions SET status = 'running', started_at = ? WHERE id = ?",
        (at, execution_id),
    )


# what a new root was given


async def root_at_sequence(tx: Tx, thread_id: str, sequence: int | None) -> str | None:
    """The id of the thread's root of that sequence."""
    async with tx.execute(
        "SELECT id FROM executions WHERE thread_id = ? AND is_root = 1 AND sequence = ?",
        (thread_id, sequence),
    ) as cursor:
        row = await cursor.fetchone()
    return None if row is None else str(row["id"])


async def insert_root_derived(
    tx: Tx,
    execution_id: str,
    *,
    recap_revision: int | None,
    recap_made_at: str | None,
    recap_digest: str | None,
    tail_from: str | None,
    digest: str,
    chars: int,
) -> None:
    """What a root was given besides its pins (immutable: a trigger refuses updates)."""
    await tx.execute(
        "INSERT INTO root_derived (execution_id, recap_revision, recap_made_at, recap_digest, "
        "tail_from, digest, chars) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (execution_id, recap_revision, recap_made_at, recap_digest, tail_from, digest, chars),
    )
