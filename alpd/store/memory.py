"""SQL over `memory_versions`, `memories`, `memory_fts`, `memory_proposals` and
`root_memories` (migration V21; docs/memory.md).

A new version is one call, `write_version`: the immutable version row, then the memory's
head row pointing at it, then the full-text row (kept only while the memory is active). The
service verifies the chain (`alpd.domain.memory.record.verify_chain`) over what
`versions_of` returns before it builds on a memory or shows it.

Selection for a new root (`choose_candidates`) is bounded reads inside the unit that reserves
the root: every active memory in scope holding any of the thread's words is ranked by its
full-text relevance in SQL (FTS5's bm25 on SQLite, ts_rank on PostgreSQL; recency, then the
newer id, break ties) and the best `MATCH_LIMIT` are handed over with their score — the limit
is on the ranked result, so an old memory that matches well is never cut for newer ones that
match worse — and the newest ones in scope (at most `RECENT_LIMIT` of the workspace's and as
many global ones, score 0); the domain ranks and caps them
(`alpd.domain.memory.selection`). Ranking every match costs ~3 ms at 10,000 memories
with thousands of matches (bench/bench_memory_select.py, docs/benchmarks.md).
"""

# long: every statement over the memory tables, with their full-text match written once per
# backend (FTS5 on SQLite, a GIN index on PostgreSQL); the capability's SQL read in one place.

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import astuple, dataclass
from typing import Any, Final

import msgspec

from alpd.domain.memory.record import MemoryVersion, Provenance
from alpd.domain.memory.selection import Candidate
from alpd.store.db import BlockingTx, Store, Tx, dialect_of, on_thread

__all__ = [
    "MATCH_LIMIT",
    "RECENT_LIMIT",
    "Chooser",
    "HeadRow",
    "ProposalRow",
    "choose_candidates",
    "decide_proposal",
    "head_of",
    "heads",
    "insert_proposal",
    "insert_root_memories",
    "link_proposal",
    "match_expression",
    "proposal_of",
    "proposals_waiting",
    "reopen_proposal",
    "search_heads",
    "versions_of",
    "versions_read",
    "write_version",
]

#: candidates a root's selection reads: the most relevant to the thread's words (ranked over
#: every match), and the newest in scope
MATCH_LIMIT: Final = 160
RECENT_LIMIT: Final = 32

_VERSION_COLUMNS: Final = (
    "memory_id, version, owner_uid, kind, scope, workspace, text, status, provenance, "
    "confirmed_at, at, change, previous_digest, digest"
)
_HEAD_COLUMNS: Final = (
    "m.id, m.owner_uid, m.scope, m.workspace, m.kind, m.status, m.version, m.digest, "
    "m.confirmed_at, m.created_at, m.updated_at, m.thread_id, m.file_path, m.file_sha256, "
    "v.text"
)
_HEAD_JOIN: Final = (
    "memories m JOIN memory_versions v ON v.memory_id = m.id AND v.version = m.version"
)
_FTS_JOIN: Final = (
    "memory_fts f JOIN memories m ON m.seq = f.rowid "
    "JOIN memory_versions v ON v.memory_id = m.id AND v.version = m.version"
)
#: the full-text match of `memory_fts` and its best-first order, by backend: FTS5's on SQLite;
#: on PostgreSQL the GIN index over `alp_fold(text)` (the schema's), where the same quoted
#: expression (`match_expression`) is a `websearch_to_tsquery`, ranked by `ts_rank` (whose
#: order, for PostgreSQL, takes the expression a second time)
_MATCH: Final = {
    "sqlite": ("memory_fts MATCH ?", "bm25(memory_fts)"),
    "postgres": (
        "to_tsvector('simple', alp_fold(f.text)) @@ websearch_to_tsquery('simple', alp_fold(?))",
        "ts_rank(to_tsvector('simple', alp_fold(f.text)), "
        "websearch_to_tsquery('simple', alp_fold(?))) DESC",
    ),
}
_CANDIDATE_COLUMNS: Final = "m.id, v.version, v.kind, v.scope, v.text, v.confirmed_at, v.digest"
#: a match's relevance to the thread's words, higher is better, by backend: FTS5's bm25 (lower
#: is better, hence negated); PostgreSQL's ts_rank over the same expression (taken once more)
_RELEVANCE: Final = {
    "sqlite": "-bm25(memory_fts)",
    "postgres": "ts_rank(to_tsvector('simple', alp_fold(f.text)), "
    "websearch_to_tsquery('simple', alp_fold(?)))",
}
#: what a caller in `workspace` sees: its workspace's memories and the global ones
_IN_SCOPE: Final = "m.owner_uid = ? AND (m.workspace = ? OR m.workspace IS NULL)"


@dataclass(frozen=True, slots=True)
class HeadRow:
    """A memory as listed: its newest version's columns (text from the version row)."""

    id: str
    owner_uid: int
    scope: str
    workspace: str | None
    kind: str
    status: str
    version: int
    digest: str
    confirmed_at: str
    created_at: str
    updated_at: str
    thread_id: str | None
    file_path: str | None
    file_sha256: str | None
    text: str


@dataclass(frozen=True, slots=True)
class ProposalRow:
    id: str
    owner_uid: int
    thread_id: str
    execution_id: str
    workspace: str
    scope: str
    kind: str
    text: str
    file_path: str | None
    status: str
    proposed_at: str
    decided_at: str | None
    memory_id: str | None
    thread_title: str | None = None


def _head(row: sqlite3.Row) -> HeadRow:
    return HeadRow(*(row[i] for i in range(15)))


def _candidate(row: sqlite3.Row) -> Candidate:
    return Candidate(*(row[i] for i in range(7)))


def _match(row: sqlite3.Row) -> Candidate:
    found = _candidate(row)
    return Candidate(
        found.memory_id, found.version, found.kind, found.scope, found.text,
        found.confirmed_at, found.digest, relevance=float(row[7]),
    )  # fmt: skip


def _version(row: sqlite3.Row) -> tuple[MemoryVersion, str]:
    version = MemoryVersion(
        memory_id=row["memory_id"],
        version=row["version"],
        owner_uid=row["owner_uid"],
        kind=row["kind"],
        scope=row["scope"],
        workspace=row["workspace"],
        text=row["text"],
        status=row["status"],
        provenance=msgspec.json.decode(row["provenance"], type=Provenance),
        confirmed_at=row["confirmed_at"],
        at=row["at"],
        change=row["change"],
        previous_digest=row["previous_digest"],
    )
    return version, str(row["digest"])


async def write_version(tx: Tx, version: MemoryVersion, digest: str) -> None:
    """Record `version` and point its memory's head (and its full-text row) at it."""
    await tx.execute(
        f"INSERT INTO memory_versions ({_VERSION_COLUMNS}) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            version.memory_id,
            version.version,
            version.owner_uid,
            version.kind,
            version.scope,
            version.workspace,
            version.text,
            version.status,
            msgspec.json.encode(version.provenance).decode(),
            version.confirmed_at,
            version.at,
            version.change,
            version.previous_digest,
            digest,
        ),
    )
    cited = version.provenance
    await tx.execute(
        "INSERT INTO memories (id, owner_uid, scope, workspace, kind, status, version, digest, "
        "confirmed_at, created_at, updated_at, thread_id, file_path, file_sha256) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (id) DO UPDATE SET status = excluded.status, version = excluded.version, "
        "digest = excluded.digest, confirmed_at = excluded.confirmed_at, "
        "updated_at = excluded.updated_at, file_sha256 = excluded.file_sha256",
        (
            version.memory_id,
            version.owner_uid,
            version.scope,
            version.workspace,
            version.kind,
            version.status,
            version.version,
            digest,
            version.confirmed_at,
            version.at,
            version.at,
            cited.thread_id,
            cited.file_path,
            cited.file_sha256,
        ),
    )
    async with tx.execute("SELECT seq FROM memories WHERE id = ?", (version.memory_id,)) as cur:
        row = await cur.fetchone()
    assert row is not None
    await tx.execute("DELETE FROM memory_fts WHERE rowid = ?", (row["seq"],))
    if version.status == "active":
        await tx.execute(
            "INSERT INTO memory_fts (rowid, text) VALUES (?, ?)", (row["seq"], version.text)
        )


def _versions_sql(count: int) -> str:
    return (
        f"SELECT {_VERSION_COLUMNS} FROM memory_versions WHERE memory_id IN "
        f"({', '.join('?' * count)}) ORDER BY memory_id, version"
    )


def _chains(
    ids: Sequence[str], rows: Sequence[sqlite3.Row]
) -> dict[str, list[tuple[MemoryVersion, str]]]:
    found: dict[str, list[tuple[MemoryVersion, str]]] = {memory_id: [] for memory_id in ids}
    for row in rows:
        found[row["memory_id"]].append(_version(row))
    return found


async def versions_of(tx: Tx, ids: Sequence[str]) -> dict[str, list[tuple[MemoryVersion, str]]]:
    """Every version of each memory, oldest first, with its stored digest."""
    if not ids:
        return {}
    async with tx.execute(_versions_sql(len(ids)), tuple(ids)) as cursor:
        return _chains(ids, list(await cursor.fetchall()))


async def versions_read(
    store: Store, ids: Sequence[str]
) -> dict[str, list[tuple[MemoryVersion, str]]]:
    """`versions_of` outside a unit (a listing, a search)."""
    if not ids:
        return {}
    return _chains(ids, await store.fetchall(_versions_sql(len(ids)), tuple(ids)))


async def head_of(tx: Tx, memory_id: str, owner_uid: int) -> HeadRow | None:
    async with tx.execute(
        f"SELECT {_HEAD_COLUMNS} FROM {_HEAD_JOIN} WHERE m.id = ? AND m.owner_uid = ?",
        (memory_id, owner_uid),
    ) as cursor:
        row = await cursor.fetchone()
    return None if row is None else _head(row)


async def heads(
    store: Store,
    owner_uid: int,
    *,
    workspace: str | None,
    statuses: Sequence[str],
    limit: int,
    confirmed_before: str | None = None,
    cites_a_file: bool = False,
) -> list[HeadRow]:
    """Memories of the owner, newest change first: in `workspace` (and global), or all."""
    where = ["m.owner_uid = ?", f"m.status IN ({', '.join('?' * len(statuses))})"]
    params: list[Any] = [owner_uid, *statuses]
    if workspace is not None:
        where.append("(m.workspace = ? OR m.workspace IS NULL)")
        params.append(workspace)
    if confirmed_before is not None:
        where.append("m.confirmed_at < ?")
        params.append(confirmed_before)
    if cites_a_file:
        where.append("m.file_path IS NOT NULL")
    rows = await store.fetchall(
        f"SELECT {_HEAD_COLUMNS} FROM {_HEAD_JOIN} WHERE {' AND '.join(where)} "
        "ORDER BY m.updated_at DESC, m.id DESC LIMIT ?",
        (*params, limit),
    )
    return [_head(row) for row in rows]


def match_expression(terms: Sequence[str], *, any_term: bool) -> str:
    """A safe FTS5 expression: each term quoted (quotes doubled), OR'ed or all required."""
    quoted = ['"' + term.replace('"', '""') + '"' for term in terms]
    return (" OR " if any_term else " ").join(quoted)


async def search_heads(
    store: Store, owner_uid: int, workspace: str | None, terms: Sequence[str], limit: int
) -> list[HeadRow]:
    """Active memories holding every term, best bm25 first (in `workspace` and global, or
    all of the owner's)."""
    if not terms:
        return []
    scope = ""
    params: list[Any] = [match_expression(terms, any_term=False), owner_uid]
    if workspace is not None:
        scope = " AND (m.workspace = ? OR m.workspace IS NULL)"
        params.append(workspace)
    dialect = dialect_of(store)
    match, best_first = _MATCH[dialect]
    ranked = [params[0]] if dialect == "postgres" else []
    rows = await store.fetchall(
        f"SELECT {_HEAD_COLUMNS} FROM {_FTS_JOIN} "
        f"WHERE {match} AND m.owner_uid = ? AND m.status = 'active'{scope} "
        f"ORDER BY {best_first} LIMIT ?",
        (*params, *ranked, limit),
    )
    return [_head(row) for row in rows]


def _candidate_rows(
    conn: BlockingTx, owner_uid: int, workspace: str, terms: Sequence[str]
) -> list[Candidate]:
    found: list[Candidate] = []
    if terms:
        dialect = dialect_of(conn)
        expression = match_expression(terms, any_term=True)
        scored = [expression] if dialect == "postgres" else []
        # Ranked over the head rows alone; the version rows (their text) are read for the
        # best `MATCH_LIMIT` only: carrying every match's text through the sort cost a third
        # more than the ranking itself.
        found += map(_match, conn.execute(
            f"WITH ranked AS (SELECT m.seq AS seq, {_RELEVANCE[dialect]} AS relevance "
            "FROM memory_fts f JOIN memories m ON m.seq = f.rowid "
            f"WHERE {_MATCH[dialect][0]} AND m.status = 'active' AND {_IN_SCOPE} "
            "ORDER BY relevance DESC, m.confirmed_at DESC, m.id DESC LIMIT ?) "
            f"SELECT {_CANDIDATE_COLUMNS}, r.relevance FROM ranked r "
            "JOIN memories m ON m.seq = r.seq "
            "JOIN memory_versions v ON v.memory_id = m.id AND v.version = m.version",
            (*scored, expression, owner_uid, workspace, MATCH_LIMIT),
        ))  # fmt: skip
    for where, scope in (("m.workspace = ?", (workspace,)), ("m.workspace IS NULL", ())):
        found += map(_candidate, conn.execute(
            f"SELECT {_CANDIDATE_COLUMNS} FROM {_HEAD_JOIN} WHERE m.owner_uid = ? "
            f"AND m.status = 'active' AND {where} ORDER BY m.confirmed_at DESC LIMIT ?",
            (owner_uid, *scope, RECENT_LIMIT),
        ))  # fmt: skip
    return found


Chooser = Callable[[list[Candidate]], Sequence[Candidate]]


async def choose_candidates(
    tx: Tx, owner_uid: int, workspace: str, terms: Sequence[str], choose: Chooser
) -> tuple[Sequence[Candidate], dict[str, list[tuple[MemoryVersion, str]]]]:
    """A root's selection in one hop to the writer's thread (a loaded machine stretches
    each hop to milliseconds): the bounded candidates (module docstring), `choose` (pure)
    applied to them, and every version of each chosen memory for its chain check."""

    def work(
        conn: BlockingTx,
    ) -> tuple[Sequence[Candidate], dict[str, list[tuple[MemoryVersion, str]]]]:
        chosen = choose(_candidate_rows(conn, owner_uid, workspace, terms))
        ids = [c.memory_id for c in chosen]
        rows = conn.execute(_versions_sql(len(ids)), ids).fetchall() if ids else []
        return chosen, _chains(ids, rows)

    return await on_thread(tx, work)


async def insert_root_memories(
    tx: Tx, execution_id: str, versions: list[tuple[str, int]], digest: str, size: int
) -> None:
    """What memories a root was given (immutable: triggers refuse changes)."""
    await tx.execute(
        "INSERT INTO root_memories (execution_id, versions, digest, bytes) VALUES (?, ?, ?, ?)",
        (execution_id, msgspec.json.encode(versions).decode(), digest, size),
    )


_PROPOSAL_COLUMNS: Final = (
    "p.id, p.owner_uid, p.thread_id, p.execution_id, p.workspace, p.scope, p.kind, p.text, "
    "p.file_path, p.status, p.proposed_at, p.decided_at, p.memory_id, t.title"
)


def _proposal(row: sqlite3.Row) -> ProposalRow:
    return ProposalRow(*(row[i] for i in range(14)))


async def insert_proposal(tx: Tx, proposal: ProposalRow) -> None:
    await tx.execute(
        "INSERT INTO memory_proposals (id, owner_uid, thread_id, execution_id, workspace, scope, "
        "kind, text, file_path, status, proposed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        astuple(proposal)[:11],
    )


async def proposals_waiting(
    store: Store, owner_uid: int, thread_id: str | None, limit: int
) -> list[ProposalRow]:
    """The owner's proposals waiting in the inbox, oldest first (of one thread, or all)."""
    where = "p.owner_uid = ? AND p.status = 'inbox'"
    params: list[Any] = [owner_uid]
    if thread_id is not None:
        where += " AND p.thread_id = ?"
        params.append(thread_id)
    rows = await store.fetchall(
        f"SELECT {_PROPOSAL_COLUMNS} FROM memory_proposals p LEFT JOIN threads t "
        f"ON t.id = p.thread_id WHERE {where} ORDER BY p.proposed_at, p.id LIMIT ?",
        (*params, limit),
    )
    return [_proposal(row) for row in rows]


async def proposal_of(tx: Tx, proposal_id: str, owner_uid: int) -> ProposalRow | None:
    async with tx.execute(
        f"SELECT {_PROPOSAL_COLUMNS} FROM memory_proposals p LEFT JOIN threads t "
        "ON t.id = p.thread_id WHERE p.id = ? AND p.owner_uid = ?",
        (proposal_id, owner_uid),
    ) as cursor:
        row = await cursor.fetchone()
    return None if row is None else _proposal(row)


async def decide_proposal(
    tx: Tx, proposal_id: str, status: str, decided_at: str, memory_id: str | None
) -> bool:
    """Take a waiting proposal out of the inbox; False when it no longer waited."""
    cursor = await tx.execute(
        "UPDATE memory_proposals SET status = ?, decided_at = ?, memory_id = ? "
        "WHERE id = ? AND status = 'inbox'",
        (status, decided_at, memory_id, proposal_id),
    )
    return cursor.rowcount == 1


async def reopen_proposal(tx: Tx, proposal_id: str) -> None:
    """Back to waiting (its confirmation failed before a memory was written)."""
    await tx.execute(
        "UPDATE memory_proposals SET status = 'inbox', decided_at = NULL WHERE id = ?",
        (proposal_id,),
    )


async def link_proposal(tx: Tx, proposal_id: str, memory_id: str) -> None:
    sql = "UPDATE memory_proposals SET memory_id = ? WHERE id = ?"
    await tx.execute(sql, (memory_id, proposal_id))
