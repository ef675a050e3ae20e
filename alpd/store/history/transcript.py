"""`thread/transcript`'s statements: one page of a thread's conversation (`read_page`, one
unit of work: run on the event loop's thread by `Store.read_inline`, as its reads are
bounded); where a running root's new items go is `transcript_live`.

Every row carries its place `(s, p, n)` (`alpd.domain.history.transcript.Key`: the root's
sequence, the phase within it, a number within the phase; docs/transcript.md). The page is
made of bounded reads, each answered by an index, whatever the thread's size:

* entries: root by root from the cursor's root on (the thread's roots are read once, by the
  `(thread_id, sequence)` index), each root's entries by `history_by_execution` in id order,
  `LIMIT` what the page still needs — the newest page of a 100,000-entry thread reads its
  last `limit` entries, not the thread;
* everything else (root markers, deliveries, reports, handoffs, clears and undos,
  compactions, the recap): one statement over the thread's own rows of those tables, each
  placed by SQL, filtered by the cursor and `LIMIT`ed there;
* every tool call's result (and a result's call) on the page, in one statement of one
  indexed branch per half: by call id within the execution, from the entry on in the
  index's order.

An entry stored as a copy (`copy_of`: a resumed session's earlier lines) is its original's
repetition and is left out; an adopted root (`origin.adoptedFrom`) reads the entries of the
legacy execution it was adopted from.

`read_page` gives the page as read (`PageRead`: nothing checked yet; entries as plain tuples by
position, `tuples`), and `page_rows` its rows. Every entry the page shows is checked against
its digest there (`check_entry_digest`), and only those: of the rows read (`limit + 1` per
source), those past the page (`page_window`) are dropped first, a result shown inside its
call is checked with the call, and a result hidden because its call shows it (or its call,
found only to know that) is not. An entry read exactly as it was when last verified — every
column read, its digest among them — is not hashed again
(`alpd.store.history.verified_entries`): any change is hashed afresh and a mismatch is
HISTORY_ENTRY_TAMPERED as before. A page read equal to one already made into a page, in
every value, makes the same page: `alpd.services.history.transcript` keeps the pages made.
"""

# long: a page's statements and the code reading their rows by position, in one module,
# because the column positions (`_AT`, `_FOR_ENTRY`) are the statements' and change with them.

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

import msgspec

from alpd.domain.history.transcript import (
    ENTRY_PHASE,
    Direction,
    EntryRow,
    EventRow,
    Key,
    RootRow,
    ToolHalf,
    TranscriptRows,
    page_window,
)
from alpd.errors import PermissionDenied, ThreadNotFound
from alpd.store.db import BlockingTx, dialect_of
from alpd.store.entry_rows import DIGESTED_COLUMNS
from alpd.store.history.verified_entries import ENTRY_READ_SQL, ENTRY_READ_WIDTH, VERIFIED_ENTRIES
from alpd.store.threads.steps import labels_from, labels_sql

__all__ = [
    "PageQuery",
    "PageRead",
    "halves_sql",
    "page_rows",
    "read_page",
    "read_weight",
    "tuples",
]

#: how many roots one page visits at most looking for entries (a run of empty roots, e.g.
#: the `command` runtime's, is skipped through in steps of this many)
MAX_ROOTS_VISITED: Final = 10_000


@dataclass(frozen=True, slots=True)
class PageQuery:
    thread_id: str
    uid: int
    direction: Direction
    #: the cursor's key (exclusive); for `before` with no cursor, past the end
    bound: Key
    limit: int
    root: int | None = None
    since: str | None = None


_ROOTS: Final = f"""
SELECT r.id, r.sequence, r.runtime, r.agent, r.kind, r.origin, r.status, r.outcome,
    r.cost_usd, r.created_at, r.started_at, r.settled_at,
    coalesce(r.native_session_id, (SELECT a.native_session_id FROM executions a
        WHERE a.id = json_extract(r.origin, '$.adoptedFrom'))) AS native_session_id,
    coalesce(json_extract(r.origin, '$.adoptedFrom'), r.id) AS reads,
    {labels_sql("r.id")}
FROM executions r WHERE r.thread_id = ?1 AND r.is_root = 1 AND r.sequence IS NOT NULL
ORDER BY r.sequence
"""

#: an entry's columns, read as tuples in this order (`_AT`): its id, digest, the digests'
#: start, then its digested columns (`ENTRY_READ_SQL`: what the page shows is among them)
_ENTRY_COLUMNS: Final = ENTRY_READ_SQL
_ID: Final = 0
_AT: Final = {column: 3 + i for i, column in enumerate(DIGESTED_COLUMNS)}
(_EXECUTION, _ROLE, _KIND, _TEXT, _TOOL_NAME, _TOOL_INPUT, _TAIL, _TS, _MODEL, _CALL,
 _ERROR) = (_AT[c] for c in ("execution_id", "role", "kind", "text", "tool_name", "tool_input",
                             "output_tail", "ts", "model", "call_id", "is_error"))  # fmt: skip
#: a half's row: the entry's columns, then the page entry it is the other half of
_FOR_ENTRY: Final = ENTRY_READ_WIDTH

# One root's entries (what it reads: itself, or the execution it was adopted from) past a
# bound, in the page's order: `history_by_execution` answers it from the bound on.
_ENTRIES: Final = {
    "before": f"SELECT {_ENTRY_COLUMNS} FROM history_entries h WHERE h.execution_id = ?1 "
    "AND h.id < ?2 AND h.copy_of IS NULL AND (?3 IS NULL OR h.ts >= ?3) "
    "ORDER BY h.id DESC LIMIT ?4",
    "after": f"SELECT {_ENTRY_COLUMNS} FROM history_entries h WHERE h.execution_id = ?1 "
    "AND h.id > ?2 AND h.copy_of IS NULL AND (?3 IS NULL OR h.ts >= ?3) "
    "ORDER BY h.id LIMIT ?4",
}

# The other half of each tool call on the page (its result, or a result's call), the
# nearest in the execution's order, all in one statement of one text whatever the page: the
# halves asked for come as one JSON array of [entry id, execution, call id, 1 for a call]
# (`halves_sql`), each looked up through `history_by_execution` from its entry on. Their
# stored columns come too: a result shown inside its call is re-hashed like the call.
#
# One text, prepared once per connection: the statement was a UNION ALL of one branch per
# half, a new text for each page's pattern of calls and results, and preparing a page's 60
# branches took ~8 ms — more than a page's inline budget (`Store.read_inline`), so a
# connection interrupted while preparing it never kept it and was interrupted again on
# every read of that page (16 ms a page through alpd, against 2.4 ms of statements).
# The asked-for halves and the ids found are subqueries kept apart (`LIMIT -1 OFFSET 0`),
# so the entries are joined on a plain column: under PostgreSQL's row-level security a join
# condition calling `json_extract` (not LEAKPROOF) would never be an index condition.
_HALVES: Final = f"""
SELECT {_ENTRY_COLUMNS}, found.k AS for_entry FROM (
    SELECT asked.k, CASE WHEN asked.is_call = 1 THEN
        (SELECT x.id FROM history_entries x WHERE x.execution_id = asked.e
            AND x.call_id = asked.c AND x.kind = 'tool_result' AND x.id > asked.k
            ORDER BY x.id LIMIT 1)
    ELSE
        (SELECT x.id FROM history_entries x WHERE x.execution_id = asked.e
            AND x.call_id = asked.c AND x.kind = 'tool_call' AND x.id < asked.k
            ORDER BY x.id DESC LIMIT 1)
    END AS other
    FROM (
        SELECT CAST(json_extract(value, '$[0]') AS INTEGER) AS k,
            json_extract(value, '$[1]') AS e, json_extract(value, '$[2]') AS c,
            CAST(json_extract(value, '$[3]') AS INTEGER) AS is_call
        FROM json_each(?1) LIMIT -1 OFFSET 0
    ) AS asked
    LIMIT -1 OFFSET 0
) AS found JOIN history_entries h ON h.id = found.other
"""


_ENCODE: Final = msgspec.json.Encoder().encode


def halves_sql(rows: Sequence[Sequence[Any]]) -> list[tuple[str, list[object]]]:
    """The statement finding the other half of every tool call and result among `rows`
    (entry tuples, `_ENTRY_COLUMNS`), with its parameter; none when there is none."""
    asked = [
        [row[_ID], row[_EXECUTION], row[_CALL], int(row[_KIND] == "tool_call")]
        for row in rows
        if row[_CALL] is not None and row[_KIND] in ("tool_call", "tool_result")
    ]
    return [(_HALVES, [_ENCODE(asked).decode()])] if asked else []


def tuples(conn: BlockingTx, sql: str, params: Sequence[object]) -> list[tuple[Any, ...]]:
    """The rows of `sql` as plain tuples, whatever the connection's row factory (the page's
    entries are read by position: a `sqlite3.Row` looked up by name costs a scan of its
    column names per field)."""
    if dialect_of(conn) == "postgres":  # its rows are `PgRow`s: sequences already
        return [tuple(row) for row in conn.execute(sql, params).fetchall()]
    cursor = conn.cursor()
    cursor.row_factory = None
    try:
        return cursor.execute(sql, params).fetchall()
    finally:
        cursor.close()


# The root a time falls after: the newest root opened at or before it (0: before the first).
_AFTER_ROOT: Final = (
    "coalesce((SELECT max(x.sequence) FROM executions x WHERE x.thread_id = ?1 "
    "AND x.is_root = 1 AND x.created_at <= {at}), 0)"
)

# Everything but entries, each row placed (s, p, n): see docs/transcript.md for the phases.
_EVENTS: Final = f"""
SELECT * FROM (
    SELECT r.sequence AS s, 0 AS p, 0 AS n, 'root' AS type, r.id AS root_id,
        r.id AS execution_id, r.created_at AS at, NULL AS text, NULL AS envelope,
        NULL AS source, NULL AS other_thread, r.status AS status, NULL AS ref
    FROM executions r WHERE r.thread_id = ?1 AND r.is_root = 1 AND r.sequence IS NOT NULL
    UNION ALL
    SELECT r.sequence, 1, d.id, d.source_kind, r.id, r.id,
        coalesce(d.delivered_at, d.created_at), d.text, d.envelope, d.source,
        coalesce(d.from_thread_id, hf.source_thread_id), d.status, hf.id
    FROM deliveries d JOIN executions r ON r.id = d.execution_id
    LEFT JOIN handoffs hf ON hf.delivery_id = d.id
    WHERE d.thread_id = ?1 AND r.sequence IS NOT NULL
    UNION ALL
    SELECT coalesce(sr.sequence, {_AFTER_ROOT.format(at="h.created_at")}), 3, h.rowid,
        'handoff-out', sr.id, h.source_execution_id, h.created_at, h.summary, NULL,
        t.title, h.target_thread_id, h.status, h.id
    FROM handoffs h JOIN threads t ON t.id = h.target_thread_id
    LEFT JOIN executions se ON se.id = h.source_execution_id
    LEFT JOIN executions sr ON sr.id = se.root_id AND sr.thread_id = ?1
    WHERE h.source_thread_id = ?1 AND h.status != 'failed'
    UNION ALL
    SELECT r.sequence, 4, rp.id, 'report', r.id, rp.execution_id, rp.created_at, rp.message,
        NULL, rp.kind, NULL, rp.outcome, rp.message_source
    FROM reports rp JOIN executions e ON e.id = rp.execution_id
    JOIN executions r ON r.id = e.root_id
    WHERE rp.thread_id = ?1 AND r.sequence IS NOT NULL AND rp.kind != 'temp'
    UNION ALL
    SELECT {_AFTER_ROOT.format(at="c.created_at")}, 5, c.revision, 'compaction', NULL, NULL,
        c.created_at, NULL, NULL, NULL, NULL, NULL, NULL
    FROM compactions c WHERE c.thread_id = ?1
    UNION ALL
    SELECT {_AFTER_ROOT.format(at="cs.at")}, 6, cs.revision, cs.kind, NULL, cs.execution_id,
        cs.at, NULL, NULL, cs.requested_by, NULL, cs.door, CAST(u.sequence AS TEXT)
    FROM context_steps cs LEFT JOIN executions u ON u.id = cs.execution_id
    WHERE cs.thread_id = ?1
    UNION ALL
    SELECT {_AFTER_ROOT.format(at="d.created_at")}, 7, d.id, d.source_kind, NULL, NULL,
        d.created_at, d.text, d.envelope, d.source,
        coalesce(d.from_thread_id, hf.source_thread_id), d.status, hf.id
    FROM deliveries d LEFT JOIN handoffs hf ON hf.delivery_id = d.id
    WHERE d.thread_id = ?1 AND d.execution_id IS NULL
    UNION ALL
    SELECT {_AFTER_ROOT.format(at="h.created_at")}, 8, h.rowid, 'directive', NULL,
        h.source_execution_id, h.created_at, h.summary, NULL, t.title, h.source_thread_id,
        h.status, h.id
    FROM handoffs h JOIN threads t ON t.id = h.source_thread_id
    WHERE h.target_thread_id = ?1 AND h.delivery_id IS NULL
        AND h.status IN ('inbox', 'dismissed')
    UNION ALL
    SELECT {_AFTER_ROOT.format(at="rc.made_at")}, 9, 0, 'recap', NULL, rc.execution_id,
        rc.made_at, rc.headline || char(10) || rc.gist, NULL, NULL, NULL, NULL,
        CAST(rc.source_revision AS TEXT)
    FROM recaps rc WHERE rc.thread_id = ?1
) AS events
WHERE {{bound}} AND (?5 IS NULL OR s = ?5) AND (?6 IS NULL OR at >= ?6)
ORDER BY s {{order}}, p {{order}}, n {{order}} LIMIT ?7
"""
_EVENTS_PAGE: Final = {
    "before": _EVENTS.format(bound="(s, p, n) < (?2, ?3, ?4)", order="DESC"),
    "after": _EVENTS.format(bound="(s, p, n) > (?2, ?3, ?4)", order="ASC"),
}
#: PostgreSQL has no rowid: a handoff's place among its kind is its reservation's microsecond
#: (the order SQLite's rowid gives it: reserved, then inserted)
_EVENTS_PAGE_POSTGRES: Final = {
    direction: sql.replace("h.rowid", "CAST(h.reserved_at * 1000000 AS BIGINT)")
    for direction, sql in _EVENTS_PAGE.items()
}


class PageRead(NamedTuple):
    """One page as the store read it, nothing checked yet: the page's own events and
    entries (`page_window`), each entry with the other half of its tool call. Compared with
    `==` value by value: two equal reads are the same page (`page_rows`, then
    `build_page`, are functions of the read alone)."""

    query: PageQuery
    roots: list[RootRow]
    events: list[EventRow]
    #: the page's entries as read (`_ENTRY_COLUMNS`), each with its key
    entries: list[tuple[Key, tuple[Any, ...]]]
    #: the other halves of the page's tool calls and results as read (`_HALVES`)
    halves: list[tuple[Any, ...]]
    #: more lay past the page
    more: bool


def read_page(conn: BlockingTx, query: PageQuery) -> PageRead:
    """One page's reads, on the reader's thread: THREAD_NOT_FOUND, PERMISSION_DENIED. Each
    source is read to `limit + 1` past the bound (so the page is exact and says whether
    more lie beyond); of what was read, only the page's own rows (`page_window`) are kept,
    and the halves of their tool calls looked up."""
    _check_owner(conn, query.thread_id, query.uid)
    roots = [_root(row) for row in conn.execute(_ROOTS, (query.thread_id,))]
    want = query.limit + 1
    events = [
        _event(row)
        for row in conn.execute(
            (_EVENTS_PAGE_POSTGRES if dialect_of(conn) == "postgres" else _EVENTS_PAGE)[
                query.direction
            ],
            (query.thread_id, *query.bound, query.root, query.since, want),
        )
    ]
    found = _entries(conn, query, roots, want)
    kept, beyond = page_window(
        [*(e.key for e in events), *(key for key, _ in found)],
        query.direction, query.bound, query.limit,
    )  # fmt: skip
    entries = [(key, row) for key, row in found if key in kept]
    halves: list[tuple[Any, ...]] = []
    for statement in halves_sql([row for _, row in entries]):
        halves += tuples(conn, *statement)
    return PageRead(
        query=query,
        roots=roots,
        events=[event for event in events if event.key in kept],
        entries=entries,
        halves=halves,
        more=beyond,
    )


def page_rows(read: PageRead) -> TranscriptRows:
    """The rows of a page read, each entry shown checked against its digest:
    HISTORY_ENTRY_TAMPERED."""
    return TranscriptRows(
        roots=read.roots, events=read.events, entries=_checked(read), more=read.more
    )


def read_weight(read: PageRead) -> int:
    """About how many characters a page read holds (its texts, and 256 a row besides): what
    keeping it costs."""
    weight = 256 * (len(read.entries) + len(read.halves) + len(read.events))
    for event in read.events:
        weight += len(event.text or "") + len(event.envelope or "")
    for row in [*(row for _, row in read.entries), *read.halves]:
        weight += len(row[_TEXT] or "") + len(row[_TOOL_INPUT] or "") + len(row[_TAIL] or "")
    return weight


_OWNER: Final = "SELECT owner_uid FROM threads WHERE id = ?"


def _check_owner(conn: BlockingTx, thread_id: str, uid: int) -> None:
    row = conn.execute(_OWNER, (thread_id,)).fetchone()
    if row is None:
        raise ThreadNotFound(
            f"no thread {thread_id!r}; `alp thread list --all` shows yours", threadId=thread_id
        )
    if row["owner_uid"] != uid:
        raise PermissionDenied(f"thread {thread_id} belongs to another user", threadId=thread_id)


Found = tuple[Key, tuple[Any, ...]]


def _entries(
    conn: BlockingTx, query: PageQuery, roots: Sequence[RootRow], want: int
) -> list[Found]:
    """Up to `want` entries past the bound, root by root in the page's order, as tuples."""
    s, p, n = query.bound
    backward = query.direction == "before"
    if backward:
        candidates = [r for r in reversed(roots) if r.sequence <= s]
    else:
        candidates = [r for r in roots if r.sequence >= s]
    if query.root is not None:
        candidates = [r for r in candidates if r.sequence == query.root]
    found: list[Found] = []
    for root in candidates[:MAX_ROOTS_VISITED]:
        if root.sequence == s:
            # the cursor's own root: entries past its number (all of them when the cursor
            # is on an earlier phase of it, none when on a later one)
            if (p > ENTRY_PHASE) if backward else (p < ENTRY_PHASE):
                edge = 2**62 if backward else 0
            elif p == ENTRY_PHASE:
                edge = n
            else:
                continue
        else:
            edge = 2**62 if backward else 0
        got = tuples(
            conn, _ENTRIES[query.direction], (root.reads, edge, query.since, want - len(found))
        )
        sequence = root.sequence
        found.extend(((sequence, ENTRY_PHASE, row[_ID]), row) for row in got)
        if len(found) >= want:
            break
    return found


def _checked(read: PageRead) -> list[EntryRow]:
    """The page's entries with their tool halves, each entry shown checked against its
    digest: an entry, and a result shown inside its call. Not checked, as not shown: a
    result whose call holds it (the call shows it, from the half read for the call), and a
    result's call. (An entry checked twice, a result two calls share, costs a comparison.)"""
    halves = {half[_FOR_ENTRY]: half for half in read.halves}
    root_ids = {root.sequence: root.id for root in read.roots}
    verified = VERIFIED_ENTRIES
    entries: list[EntryRow] = []
    for key, row in read.entries:
        entry_id = row[_ID]
        half = halves.get(entry_id) if halves else None
        other: ToolHalf | None = None
        if half is None:
            verified(entry_id, row)
        elif row[_KIND] == "tool_call":
            verified(entry_id, row)
            verified(half[_ID], half[:_FOR_ENTRY])
            other = ToolHalf(half[_ID], half[_TAIL] or half[_TEXT] or "", bool(half[_ERROR]))
        else:
            other = ToolHalf(half[_ID], "", False)
        entries.append(
            EntryRow(
                key, root_ids[key[0]], row[_EXECUTION], row[_ROLE], row[_KIND], row[_TEXT],
                row[_TOOL_NAME], row[_TOOL_INPUT], row[_TAIL], bool(row[_ERROR]), row[_CALL],
                row[_TS], row[_MODEL], other,
            )
        )  # fmt: skip
    return entries


def _root(row: sqlite3.Row) -> RootRow:
    return RootRow(
        id=row["id"],
        sequence=row["sequence"],
        runtime=row["runtime"],
        agent=row["agent"],
        kind=row["kind"],
        origin=row["origin"],
        status=row["status"],
        outcome=row["outcome"],
        cost_usd=row["cost_usd"],
        created_at=row["created_at"],
        started_at=row["started_at"],
        settled_at=row["settled_at"],
        native_session_id=row["native_session_id"],
        reads=row["reads"],
        labels=tuple(labels_from(row["before_clear"], row["undone"])),
    )


def _event(row: sqlite3.Row) -> EventRow:
    return EventRow(
        key=(row["s"], row["p"], row["n"]),
        type=row["type"],
        root_id=row["root_id"],
        execution_id=row["execution_id"],
        at=row["at"],
        text=row["text"],
        envelope=row["envelope"],
        source=row["source"],
        other_thread=row["other_thread"],
        status=row["status"],
        ref=None if row["ref"] is None else str(row["ref"]),
    )
