"""The meaning leg of a search (docs/search.md): the answering generation's vectors in
memory (`ranking.Matrix`: float16 as stored and an int8 code of each, loaded on the first
search and extended as the index grows), the query against all of them (the exact best k,
found through the codes: `ranking.Ranking`), and the best chunks filtered with keyword
search's filters, 4 × more while too few pass: in memory, from what the leg keeps of each
row beside the matrix (`chunk_facts`), but for `since`/`until` (in SQL).

`MeaningIndex.plan` prepares a search on the loop's side (no hop: the query's vector comes
from its cache, or from an endpoint in a worker thread); `meaning_leg` runs inside the
search's one hop to the reader's thread, and `MeaningIndex.adopt` keeps what it learnt (the
extended matrix, the query's vector). Ids only: the hits a page shows are made for those
shown (`alpd.store.history.vector_hits.chunk_hits`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final, NamedTuple

from alpd.services.history import chunk_facts
from alpd.services.history.chunk_facts import ChunkFacts, empty_facts, facts_appended, refreshed
from alpd.services.history.ranking import Matrix, Ranking, appended
from alpd.services.history.ranking import empty_matrix as _empty
from alpd.store.db import BlockingTx
from alpd.store.history import vector_hits
from alpd.store.history import vectors as store
from protocol import messages as m

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from alpd.services.history.embedders import Embedder

__all__ = [
    "ChunkFacts",
    "FirstPass",
    "LegPlan",
    "LegResult",
    "Matrix",
    "Scored",
    "empty_facts",
    "empty_matrix",
    "extended_on",
    "first_pass",
    "meaning_leg",
    "meaning_leg_from",
]

#: the first round widens to this many times the chunks wanted among all chunks (a broad
#: filter, `--role user`, is met there); past it, only the chunks that pass are ranked (a
#: narrow one, `--thread`, `--runtime codex`: 264 → 74 ms at 1 GB when none pass)
FIRST_WIDENING: Final = 16

#: held while a matrix and its facts are extended and refreshed: two searches that started
#: from the same ones (PostgreSQL's reads run on several threads) write them one at a time
_EXTENDING: Final = threading.Lock()


@dataclass(frozen=True)
class LegPlan:
    generation: store.Generation
    embedder: Embedder
    matrix: Matrix
    #: what the filters read of each row of `matrix`
    facts: ChunkFacts
    #: the query's vector, or None: the hop embeds it (a local model, microseconds)
    vector: npt.NDArray[np.float32] | None
    text: str


class Scored(NamedTuple):
    candidate: vector_hits.Candidate
    cosine: float


@dataclass(frozen=True)
class LegResult:
    #: the best chunk of each unit that passed the filters, best first, at most `want`
    found: list[Scored]
    matrix: Matrix
    facts: ChunkFacts
    vector: npt.NDArray[np.float32]
    text: str


def meaning_leg(
    plan: LegPlan, uid: int, params: m.HistorySearchParams, want: int, conn: BlockingTx
) -> LegResult:
    """The meaning leg, on the reader's thread inside a search's one hop: the matrix
    extended with the vectors embedded since it was loaded, the query embedded (when not
    cached), the exact best chunks (`Ranking`) filtered in SQL, 4 × more while too few
    pass. Ids only: the page's hits are made for those shown (`vector_hits.chunk_hits`)."""
    matrix, facts = _extended(plan, conn)
    vector = plan.vector
    if vector is None:
        vector = plan.embedder.embed([plan.text])[0]
    ranking = Ranking(matrix, vector)
    try:
        found = _ranked(conn, uid, params, ranking, facts, want)
    finally:
        ranking.close()
    return LegResult(found, matrix, facts, vector, plan.text)


@dataclass(frozen=True)
class FirstPass:
    """The product of a hybrid search, computed on the loop's thread while the reader's runs
    the keyword leg (`first_pass`): the ranking of the matrix as the plan had it, its best
    `want` already found."""

    ranking: Ranking
    vector: npt.NDArray[np.float32]


def first_pass(plan: LegPlan, want: int) -> FirstPass:
    """The query's vector (embedded when not cached: a local model, microseconds), the codes'
    product over the plan's matrix and its best `want` (kept by the ranking for the hop)."""
    vector = plan.vector
    if vector is None:
        vector = plan.embedder.embed([plan.text])[0]
    ranking = Ranking(plan.matrix, vector)
    ranking.top(want)
    return FirstPass(ranking, vector)


def extended_on(plan: LegPlan, conn: BlockingTx) -> tuple[Matrix, ChunkFacts]:
    """The plan's matrix with the vectors embedded since it was loaded (the same object when
    there are none), and its facts as of now."""
    return _extended(plan, conn)


def meaning_leg_from(
    plan: LegPlan,
    first: FirstPass,
    loaded: tuple[Matrix, ChunkFacts],
    uid: int,
    params: m.HistorySearchParams,
    want: int,
    conn: BlockingTx,
) -> LegResult:
    """The meaning leg from a product computed beforehand (`first_pass`) over the plan's
    matrix; when the matrix (`extended_on`) grew since, the product is computed again over it."""
    matrix, facts = loaded
    ranking = first.ranking
    if matrix is not plan.matrix:
        ranking.close()
        ranking = Ranking(matrix, first.vector)
    try:
        found = _ranked(conn, uid, params, ranking, facts, want)
    finally:
        ranking.close()
    return LegResult(found, matrix, facts, first.vector, plan.text)


def _ranked(
    conn: BlockingTx,
    uid: int,
    params: m.HistorySearchParams,
    ranking: Ranking,
    facts: ChunkFacts,
    want: int,
) -> list[Scored]:
    """The best `want` units that pass the filters: among the best of all chunks, or among
    the chunks that pass when those held too few. The filters are read from `facts` but for
    `since`/`until`, which take a statement (`chunk_facts`' docstring says why)."""
    import numpy as np

    ids = ranking.ids
    assert facts.count == len(ids)
    in_memory = params.since is None and params.until is None

    def passing(chosen: list[int]) -> list[vector_hits.Candidate]:
        if not in_memory:
            return vector_hits.meaning_candidates(conn, uid, params, chosen)
        rows = np.searchsorted(ids, np.asarray(chosen, dtype=np.int64))
        return chunk_facts.candidates(facts, ids, rows, uid, params)

    found = _passing(passing, ranking, None, want, widen_to=want * FIRST_WIDENING)
    if found is None:
        # The best of all held too few that pass the filters: rank only those that do.
        if in_memory:
            rows = chunk_facts.passing_rows(facts, uid, params)
        else:
            allowed = np.asarray(vector_hits.filtered_chunk_ids(conn, uid, params), dtype=np.int64)
            rows = np.searchsorted(ids, allowed)  # the matrix's ids ascend: rows are appended
            inside = rows < len(ids)
            rows, allowed = rows[inside], allowed[inside]
            rows = rows[ids[rows] == allowed]  # chunks the matrix holds (embedded, not replaced)
        found = _passing(passing, ranking, rows, want, widen_to=None)
    assert found is not None
    return found


def _passing(
    passing: Callable[[list[int]], list[vector_hits.Candidate]],
    ranking: Ranking,
    rows: npt.NDArray[np.intp] | None,
    want: int,
    *,
    widen_to: int | None,
) -> list[Scored] | None:
    """The best chunk of each of the best `want` units among `rows` (all when None) that
    pass the filters (`passing`), taking 4 × more chunks while too few do: up to `widen_to`
    chunks (then None), or until none are left (`widen_to` None)."""
    candidates = want
    while True:
        ranked = ranking.top(candidates, rows)
        cosine = dict(ranked)
        best: dict[int, Scored] = {}
        for candidate in passing([c for c, _ in ranked]):
            if candidate.unit_id not in best:
                best[candidate.unit_id] = Scored(candidate, cosine[candidate.chunk_id])
        if len(best) >= want or len(ranked) < candidates:
            return list(best.values())[:want]
        if widen_to is not None and candidates >= widen_to:
            return None
        candidates *= 4


def empty_matrix(generation: store.Generation) -> Matrix:
    return _empty(generation.id, generation.dims)


def _extended(plan: LegPlan, conn: BlockingTx) -> tuple[Matrix, ChunkFacts]:
    """The plan's matrix with the vectors embedded since it was loaded, and its facts: the
    rows it held refreshed when the cutter moved since they were read (`chunk_facts`), the
    new rows read with their vectors."""
    generation = plan.generation
    through, cursor = store.index_marks(conn, generation.id)
    with _EXTENDING:
        matrix, facts = plan.matrix, plan.facts
        if cursor > facts.cursor:
            touched = store.units_touched(conn, facts.cursor, cursor) if facts.count else []
            facts = refreshed(facts, matrix.ids, touched, cursor)
        while matrix.loaded_through < through:
            rows = store.vectors_of(
                conn, generation=generation.id, after_chunk=matrix.loaded_through, through=through
            )
            if not rows:
                return replace(matrix, loaded_through=through), facts
            matrix = appended(matrix, [(r.chunk_id, r.vector) for r in rows], generation.dims)
            facts = facts_appended(facts, rows, cursor)
    return matrix, facts
