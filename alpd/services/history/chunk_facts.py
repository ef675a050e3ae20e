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

__all__ = [
    "ChunkFacts",
    "Executions",
    "candidates",
    "empty_facts",
    "facts_appended",
    "passing_rows",
    "refreshed",
]

#: a unit's role as stored (`search_units.role`), as the boolean `user` holds
ROLES: Final = {"user": True, "assistant": False}


@dataclass
class Executions:
    """The executions the rows point to, append-only (shared by the facts of one matrix:
    an execution's owner, thread, runtime and kind never change). Threads and runtimes are
    interned (`names`; -1: no thread), and the columns the filters compare are kept as numpy
    arrays too, rebuilt when executions were added."""

    ids: list[str] = field(default_factory=list)
    index_of: dict[str, int] = field(default_factory=dict)
    owner: list[int] = field(default_factory=list)
    thread: list[int] = field(default_factory=list)
    runtime: list[int] = field(default_factory=list)
    sub_agent: list[bool] = field(default_factory=list)
    names: dict[str, int] = field(default_factory=dict)
    _arrays: tuple[npt.NDArray[np.int64], npt.NDArray[np.int32], npt.NDArray[np.int32]] | None = (
        None
    )

    def index(self, row: VectorRow) -> int:
        """The index of `row`'s execution, added when new."""
        found = self.index_of.get(row.execution_id)
        if found is not None:
            return found
        found = self.index_of[row.execution_id] = len(self.ids)
        self.ids.append(row.execution_id)
        self.owner.append(row.owner_uid)
        self.thread.append(-1 if row.thread_id is None else self._name(row.thread_id))
        self.runtime.append(self._name(row.runtime))
        self.sub_agent.append(row.sub_agent)
        self._arrays = None
        return found

    def _name(self, name: str) -> int:
        return self.names.setdefault(name, len(self.names))

    def passing(self, uid: int, params: m.HistorySearchParams) -> npt.NDArray[np.bool_]:
        """Which executions the search's owner, thread and runtime filters let through."""
        import numpy as np

        if self._arrays is None or len(self._arrays[0]) != len(self.ids):
            self._arrays = (
                np.asarray(self.owner, dtype=np.int64),
                np.asarray(self.thread, dtype=np.int32),
                np.asarray(self.runtime, dtype=np.int32),
            )
        owner, thread, runtime = self._arrays
        ok: npt.NDArray[np.bool_] = owner == uid
        if params.thread_id is not None:
            ok &= thread == self.names.get(params.thread_id, -2)
        if params.runtime is not None:
            ok &= runtime == self.names.get(params.runtime, -2)
        return ok


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
    executions: Executions = field(default_factory=Executions)
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
    unit[at] = [row.unit_id for row in rows]
    execution[at] = [facts.executions.index(row) for row in rows]
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
        rows = np.flatnonzero(np.isin(facts.unit[: facts.count], units, kind="table"))
        if len(rows):
            live = np.fromiter(
                (chunk for _, _, chunk in touched if chunk is not None), dtype=np.int64
            )
            facts.alive[rows] &= np.isin(ids[rows], live)
            facts.last[rows] = [last_of[int(u)] for u in facts.unit[rows]]
    return replace(facts, cursor=cursor)


def _passing(
    facts: ChunkFacts, rows: npt.NDArray[np.intp], uid: int, params: m.HistorySearchParams
) -> npt.NDArray[np.bool_]:
    import numpy as np

    if params.role is not None and params.role not in ROLES:
        return np.zeros(len(rows), dtype=np.bool_)
    ok = facts.alive[rows] & facts.executions.passing(uid, params)[facts.execution[rows]]
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
    kept = rows[_passing(facts, rows, uid, params)]
    executions = facts.executions
    return [
        Candidate(
            chunk_id,
            unit_id,
            executions.ids[execution],
            "user" if user else "assistant",
            first,
            last,
            executions.sub_agent[execution],
        )
        for chunk_id, unit_id, execution, user, first, last in zip(
            ids[kept].tolist(),
            facts.unit[kept].tolist(),
            facts.execution[kept].tolist(),
            facts.user[kept].tolist(),
            facts.first[kept].tolist(),
            facts.last[kept].tolist(),
            strict=True,
        )
    ]


def passing_rows(
    facts: ChunkFacts, uid: int, params: m.HistorySearchParams
) -> npt.NDArray[np.intp]:
    """Every row that passes the search's filters but the time ones (ascending)."""
    import numpy as np

    rows = np.arange(facts.count)
    return rows[_passing(facts, rows, uid, params)]
