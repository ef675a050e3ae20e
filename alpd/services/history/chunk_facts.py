"""What the meaning leg's filters read of each row of its matrix, kept beside it in memory
(docs/search.md, "The filters in memory"): the row's unit, the unit's role and entry span,
and the unit's execution (owner, thread, runtime, whether a sub-agent wrote it). The best
chunks of a search are filtered here, in numpy, where a statement joined them to their units
and executions on every search (0.7 ms at 1 GB).

Row `i` is the matrix's row `i` (both grow together: `meaning_leg`). Of all this only two
things change once a chunk is written, and only where the cutter writes
(`alpd.store.history.vectors.write_units`): a unit of a growing run gets a later
`last_entry`, and the chunk it replaced is deleted. Executions are never deleted and their
owner, thread, runtime and kind never change; units are never deleted. So the facts carry
the cutter's cursor they were read at (`cursor`), and a search that finds the cursor moved
re-reads the units of the executions with entries in between (`refreshed`): their
`last_entry`, and which of their chunks still exist (`alive`). Rows loaded by the same
search are read after the cursor, so they are at least as new.

The time filters (`since`, `until`) stay in SQL (`vector_hits.meaning_candidates`): they
compare text, and PostgreSQL compares it in the database's collation, not by code point.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Final

from alpd.store.history.vector_hits import Candidate
from alpd.store.history.vectors import VectorRow
from protocol import messages as m

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["ChunkFacts", "candidates", "empty_facts", "facts_appended", "passing_rows", "refreshed"]

#: a unit's role as stored (`search_units.role`), as the boolean `user` holds
ROLES: Final = {"user": True, "assistant": False}


@dataclass
class ChunkFacts:
    """Rows `[:count]` of the per-row arrays (grown by doubling, like the matrix), and the
    executions they point to (`execution` indexes `executions`)."""

    count: int
    #: the cutter's cursor (last history entry cut into units) these facts reflect
    cursor: int
    unit: npt.NDArray[np.int64]
    execution: npt.NDArray[np.int32]
    user: npt.NDArray[np.bool_]
    first: npt.NDArray[np.int64]
    last: npt.NDArray[np.int64]
    alive: npt.NDArray[np.bool_]
    executions: list[str] = field(default_factory=list)
    index_of: dict[str, int] = field(default_factory=dict)
    owner: list[int] = field(default_factory=list)
    thread: list[str | None] = field(default_factory=list)
    runtime: list[str] = field(default_factory=list)
    sub_agent: list[bool] = field(default_factory=list)
    #: how many rows of the arrays hold data, shared by the facts that share the arrays (as
    #: `ranking.Matrix.written`)
    written: list[int] = field(default_factory=lambda: [0])


def empty_facts() -> ChunkFacts:
    import numpy as np

    return ChunkFacts(
        0,
        0,
        np.zeros(0, dtype=np.int64),
        np.zeros(0, dtype=np.int32),
        np.zeros(0, dtype=np.bool_),
        np.zeros(0, dtype=np.int64),
        np.zeros(0, dtype=np.int64),
        np.zeros(0, dtype=np.bool_),
    )


def facts_appended(facts: ChunkFacts, rows: Sequence[VectorRow], cursor: int) -> ChunkFacts:
    """`facts` with `rows` after its own (the rows the matrix appended, in its order), read
    at or after the cutter's `cursor`."""
    import numpy as np

    need = facts.count + len(rows)
    unit, execution, user = facts.unit, facts.execution, facts.user
    first, last, alive = facts.first, facts.last, facts.alive
    written = facts.written
    if need > len(unit) or written[0] != facts.count:
        capacity, count = max(need, 2 * len(unit), 1024), facts.count
        unit = np.resize(unit[:count], capacity)
        execution = np.resize(execution[:count], capacity)
        user = np.resize(user[:count], capacity)
        first = np.resize(first[:count], capacity)
        last = np.resize(last[:count], capacity)
        alive = np.resize(alive[:count], capacity)
        written = [0]
    written[0] = need
    at = slice(facts.count, need)
    for row in rows:
        if row.execution_id not in facts.index_of:
            facts.index_of[row.execution_id] = len(facts.executions)
            facts.executions.append(row.execution_id)
            facts.owner.append(row.owner_uid)
            facts.thread.append(row.thread_id)
            facts.runtime.append(row.runtime)
            facts.sub_agent.append(row.sub_agent)
    unit[at] = [row.unit_id for row in rows]
    execution[at] = [facts.index_of[row.execution_id] for row in rows]
    user[at] = [row.role == "user" for row in rows]
    first[at] = [row.first_entry for row in rows]
    last[at] = [row.last_entry for row in rows]
    alive[at] = True
    return replace(
        facts,
        count=need,
        cursor=cursor,
        unit=unit,
        execution=execution,
        user=user,
        first=first,
        last=last,
        alive=alive,
        written=written,
    )


def refreshed(
    facts: ChunkFacts,
    ids: npt.NDArray[np.int64],
    touched: Sequence[tuple[int, int, int | None]],
    cursor: int,
) -> ChunkFacts:
    """`facts` as of `cursor`: each row of a `touched` unit (unit id, its last entry, one
    of its chunks or None; `vectors.units_touched`) takes the unit's last entry, and is alive
    only while its chunk (`ids`, the matrix's) is still one of the unit's. In place (a
    row's truth only moves forward: an older facts object that shares the arrays re-reads
    the same span to the same result)."""
    import numpy as np

    if touched:
        last_of = {unit_id: last for unit_id, last, _ in touched}
        units = np.fromiter(last_of, dtype=np.int64, count=len(last_of))
        rows = np.flatnonzero(np.isin(facts.unit[: facts.count], units))
        if len(rows):
            live = np.fromiter(
                (chunk for _, _, chunk in touched if chunk is not None), dtype=np.int64
            )
            facts.alive[rows] &= np.isin(ids[rows], live)
            facts.last[rows] = [last_of[int(u)] for u in facts.unit[rows]]
    return replace(facts, cursor=cursor)


def _executions_passing(
    facts: ChunkFacts, uid: int, params: m.HistorySearchParams
) -> npt.NDArray[np.bool_]:
    """Which executions the search's owner, thread and runtime filters let through."""
    import numpy as np

    return np.fromiter(
        (
            owner == uid
            and (params.thread_id is None or thread == params.thread_id)
            and (params.runtime is None or runtime == params.runtime)
            for owner, thread, runtime in zip(facts.owner, facts.thread, facts.runtime, strict=True)
        ),
        dtype=np.bool_,
        count=len(facts.owner),
    )


def _passing(
    facts: ChunkFacts,
    executions: npt.NDArray[np.bool_],
    rows: npt.NDArray[np.intp],
    params: m.HistorySearchParams,
) -> npt.NDArray[np.bool_]:
    import numpy as np

    if params.role is not None and params.role not in ROLES:
        return np.zeros(len(rows), dtype=np.bool_)
    ok = facts.alive[rows] & executions[facts.execution[rows]]
    if params.role is not None:
        ok &= facts.user[rows] == ROLES[params.role]
    return ok


def candidates(
    facts: ChunkFacts,
    ids: npt.NDArray[np.int64],
    rows: npt.NDArray[np.intp],
    uid: int,
    params: m.HistorySearchParams,
) -> list[Candidate]:
    """The chunks of `rows` (in their order) that pass the search's filters but the time
    ones: what `vector_hits.meaning_candidates` gives for them, read from memory."""
    ok = _passing(facts, _executions_passing(facts, uid, params), rows, params)
    found = []
    for row in rows[ok].tolist():
        execution = int(facts.execution[row])
        found.append(
            Candidate(
                int(ids[row]),
                int(facts.unit[row]),
                facts.executions[execution],
                "user" if facts.user[row] else "assistant",
                int(facts.first[row]),
                int(facts.last[row]),
                facts.sub_agent[execution],
            )
        )
    return found


def passing_rows(
    facts: ChunkFacts, uid: int, params: m.HistorySearchParams
) -> npt.NDArray[np.intp]:
    """Every row that passes the search's filters but the time ones (ascending)."""
    import numpy as np

    rows = np.arange(facts.count)
    return rows[_passing(facts, _executions_passing(facts, uid, params), rows, params)]
