"""The meaning leg's first pass is exact (docs/search.md, "Why the product stays exact"): the
matrix grown batch by batch holds every stored vector in chunk order, and the best k it
returns are the k highest positive cosines of a full sort, on generated data of any shape."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("numpy")

from alpd.services.history.embedders import _import_numpy

_import_numpy()
import numpy as np  # noqa: E402

from alpd.services.history.meaning_leg import Matrix, _appended, _scores, _top  # noqa: E402

DIMS = 16


def grown(vectors: np.ndarray, batches: list[int]) -> Matrix:
    matrix = Matrix(1, np.zeros(0, dtype=np.int64), np.zeros((0, DIMS), np.float32), 0, 0)
    start = 0
    for size in [*batches, len(vectors)]:
        rows = [
            (start + i + 1, vectors[start + i].astype("<f2").tobytes())
            for i in range(min(size, len(vectors) - start))
        ]
        if rows:
            matrix = _appended(matrix, rows, DIMS)
            start += len(rows)
    return matrix


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 3000),
    st.lists(st.integers(1, 700), max_size=6),
    st.integers(1, 200),
    st.integers(0, 2**32 - 1),
)
def test_the_best_k_are_the_exact_best_k(
    chunks: int, batches: list[int], k: int, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((chunks, DIMS)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    matrix = grown(vectors, batches)
    stored = vectors.astype("<f2").astype(np.float32)
    assert matrix.count == chunks
    assert np.array_equal(matrix.ids[:chunks], np.arange(1, chunks + 1))
    assert np.array_equal(matrix.vectors[:chunks], stored)
    query = rng.standard_normal(DIMS).astype(np.float32)
    query /= np.linalg.norm(query)
    scores = _scores(matrix, query)
    assert np.allclose(scores, stored @ query, atol=1e-6)
    found = _top(matrix.ids[: matrix.count], scores, k)
    order = sorted(range(chunks), key=lambda i: (-scores[i], i))[:k]
    expected = [(i + 1, float(scores[i])) for i in order if scores[i] > 0]
    # equal cosines may come in either order; anything else is the full sort's
    assert sorted(found, key=lambda hit: (-hit[1], hit[0])) == expected


@settings(max_examples=40, deadline=None)
@given(st.integers(200, 4000), st.integers(1, 40), st.integers(2, 300), st.integers(0, 2**32 - 1))
def test_a_narrow_filter_still_gets_the_exact_best_of_what_passes(
    chunks: int, want: int, every: int, seed: int
) -> None:
    """The leg's first round ranks all chunks (widening up to 16 × `want`); when too few of
    them pass the filters it ranks only those that pass: either way the units it returns are
    the best `want` of the chunks that pass, as a full sort says. The store's statements are
    stood in for: a chunk passes when its id is a multiple of `every`, each its own unit."""
    import alpd.services.history.meaning_leg as leg
    from alpd.store.history.vector_hits import Candidate
    from alpd.store.history.vectors import Generation
    from protocol import messages as m

    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((chunks, DIMS)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    matrix = grown(vectors, [])
    query = rng.standard_normal(DIMS).astype(np.float32)
    query /= np.linalg.norm(query)

    def passes(chunk_id: int) -> bool:
        return chunk_id % every == 0

    def candidates(conn: object, uid: int, params: object, ids: list[int]) -> list[Candidate]:
        return [Candidate(c, c, "exec", "user", c, c, False) for c in ids if passes(c)]

    stand_ins = {
        "meaning_candidates": candidates,
        "filtered_chunk_ids": lambda conn, uid, params: [
            c for c in range(1, chunks + 1) if passes(c)
        ],
    }
    saved = {name: getattr(leg.vector_hits, name) for name in stand_ins}
    saved_through = leg.store.embedded_through
    try:
        for name, stand_in in stand_ins.items():
            setattr(leg.vector_hits, name, stand_in)
        leg.store.embedded_through = lambda conn, generation: chunks  # type: ignore[assignment]
        generation = Generation(1, "f", "model2vec", "{}", DIMS, chunks, "t", "t")
        plan = leg.LegPlan(generation, None, matrix, query, "q")  # type: ignore[arg-type]
        found = leg.meaning_leg(plan, 0, m.HistorySearchParams(query="q"), want, None)  # type: ignore[arg-type]
    finally:
        for name, original in saved.items():
            setattr(leg.vector_hits, name, original)
        leg.store.embedded_through = saved_through  # type: ignore[assignment]
    scores = matrix.vectors[:chunks] @ query
    passing = [c for c in range(1, chunks + 1) if passes(c) and scores[c - 1] > 0]
    expected = sorted(passing, key=lambda c: (-scores[c - 1], c))[:want]
    assert [s.candidate.chunk_id for s in found.found] == expected
