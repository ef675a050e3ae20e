"""The meaning leg's ranking is exact (docs/search.md, "An exact first pass"): the matrix
grown batch by batch holds every stored vector in chunk order, and the best k it returns,
found through int8 codes and their error bound, are the k highest positive cosines of a full
sort (float64 of the stored values, ties by chunk id), on generated data of any shape —
unit vectors, vectors of every length, rows repeated (ties), zero rows — with simsimd's
kernel and with numpy's."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("numpy")

from alpd.services.history.embedders import _import_numpy

_import_numpy()
import numpy as np  # noqa: E402

from alpd.services.history import ranking  # noqa: E402
from alpd.services.history.ranking import Matrix, Ranking, appended, empty_matrix  # noqa: E402

DIMS = 16
KERNELS = {"numpy": ranking._numpy_dots}
try:
    import simsimd  # noqa: F401

    KERNELS["simsimd"] = ranking._simsimd_dots
except ImportError:  # pragma: no cover - the semantic extra installs it
    pass


def grown(vectors: np.ndarray, batches: list[int]) -> Matrix:
    matrix = empty_matrix(1, vectors.shape[1])
    start = 0
    for size in [*batches, len(vectors)]:
        rows = [
            (start + i + 1, vectors[start + i].astype("<f2").tobytes())
            for i in range(min(size, len(vectors) - start))
        ]
        if rows:
            matrix = appended(matrix, rows, vectors.shape[1])
            start += len(rows)
    return matrix


def exact_order(stored: np.ndarray, query: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The full sort: every cosine in float64, each row summed on its own, best first, ties
    by chunk id (row + 1)."""
    q = query.astype(np.float64)
    cosines = [float(np.einsum("ij,j->i", row[None, :].astype(np.float64), q)[0]) for row in stored]
    order = sorted(range(len(stored)), key=lambda i: (-cosines[i], i))[:k]
    return [(i + 1, cosines[i]) for i in order if cosines[i] > 0]


def generated(rng: np.random.Generator, chunks: int, dims: int, shape: str) -> np.ndarray:
    vectors = rng.standard_normal((chunks, dims)).astype(np.float32)
    if shape != "any length":
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    if shape == "repeated":  # a few distinct rows, each many times: ties everywhere
        vectors = vectors[rng.integers(0, max(1, chunks // 50), chunks)]
    if shape == "zeros":  # texts with no known token embed as zeros
        vectors[rng.random(chunks) < 0.3] = 0.0
    return vectors


SHAPES = st.sampled_from(["unit", "any length", "repeated", "zeros"])


@settings(max_examples=80, deadline=None)
@given(
    st.integers(1, 3000),
    st.lists(st.integers(1, 700), max_size=6),
    st.integers(1, 200),
    st.integers(0, 2**32 - 1),
    SHAPES,
    st.sampled_from([DIMS, 3, 256]),
    st.sampled_from(sorted(KERNELS)),
)
def test_the_best_k_are_the_exact_best_k(
    chunks: int, batches: list[int], k: int, seed: int, shape: str, dims: int, kernel: str
) -> None:
    rng = np.random.default_rng(seed)
    vectors = generated(rng, chunks, dims, shape)
    matrix = grown(vectors, batches)
    stored = vectors.astype("<f2")
    assert matrix.count == chunks
    assert np.array_equal(matrix.ids[:chunks], np.arange(1, chunks + 1))
    assert np.array_equal(matrix.vectors[:chunks], stored)
    query = rng.standard_normal(dims).astype(np.float32)
    if shape != "any length":
        query /= np.linalg.norm(query)
    found = Ranking(matrix, query, KERNELS[kernel])
    assert found.top(k) == exact_order(stored, query, k)
    found.close()  # its scratch arrays go to the next search: it gets the same answer
    again = Ranking(matrix, query, KERNELS[kernel])
    assert again.top(k) == found.top(k)
    assert again._scratch is found._scratch
    # the approximate scores are within the bound of the exact ones, for every row
    exact = found.exact(np.arange(chunks))
    assert np.all(np.abs(found.approx - exact) <= found.bound)
    # and the best k of some rows are the exact best k of those
    rows = np.flatnonzero(rng.random(chunks) < 0.3)
    expected = [(int(rows[i - 1]) + 1, c) for i, c in exact_order(stored[rows], query, k)]
    assert found.top(k, rows) == expected


def test_the_kernels_give_the_same_integers() -> None:
    rng = np.random.default_rng(26)
    codes = rng.integers(-127, 128, (5000, 256), dtype=np.int8)
    query = rng.integers(-127, 128, 256, dtype=np.int8)
    expected = codes.astype(np.int64) @ query.astype(np.int64)
    for kernel in KERNELS.values():
        out = np.full(6000, -1.0)  # a view of a longer row, as a search's scratch row is
        kernel(codes, query, out[:5000])
        assert np.array_equal(out[:5000], expected)
        assert np.all(out[5000:] == -1.0)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(200, 4000),
    st.integers(1, 40),
    st.integers(2, 300),
    st.integers(0, 2**32 - 1),
    st.sampled_from(["memory", "sql"]),
)
def test_a_narrow_filter_still_gets_the_exact_best_of_what_passes(
    chunks: int, want: int, every: int, seed: int, where: str
) -> None:
    """The leg's first round ranks all chunks (widening up to 16 × `want`); when too few of
    them pass the filters it ranks only those that pass: either way the units it returns are
    the best `want` of the chunks that pass, as a full sort says. A chunk passes when its id
    is a multiple of `every`, each its own unit: a user turn among assistant runs (`--role
    user`, filtered in memory from the leg's facts), or, with `--since` (filtered in SQL),
    by the store's statements stood in for."""
    import alpd.services.history.meaning_leg as leg
    from alpd.services.history.chunk_facts import empty_facts, facts_appended
    from alpd.store.history.vector_hits import Candidate
    from alpd.store.history.vectors import Generation, VectorRow
    from protocol import messages as m

    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((chunks, DIMS)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    matrix = grown(vectors, [])
    query = rng.standard_normal(DIMS).astype(np.float32)
    query /= np.linalg.norm(query)

    def passes(chunk_id: int) -> bool:
        return chunk_id % every == 0

    def row(c: int) -> VectorRow:
        role = "user" if passes(c) else "assistant"
        return VectorRow(c, b"", c, "exec", role, c, c, 0, None, "claude", False)

    facts = facts_appended(empty_facts(), [row(c) for c in range(1, chunks + 1)], 0)
    if where == "memory":
        params = m.HistorySearchParams(query="q", role="user")
    else:
        params = m.HistorySearchParams(query="q", since="2020-01-01")

    def candidates(conn: object, uid: int, params: object, ids: list[int]) -> list[Candidate]:
        return [Candidate(c, c, "exec", "user", c, c, False) for c in ids if passes(c)]

    stand_ins = {
        "meaning_candidates": candidates,
        "filtered_chunk_ids": lambda conn, uid, params: [
            c for c in range(1, chunks + 1) if passes(c)
        ],
    }
    saved = {name: getattr(leg.vector_hits, name) for name in stand_ins}
    saved_marks = leg.store.index_marks
    try:
        for name, stand_in in stand_ins.items():
            setattr(leg.vector_hits, name, stand_in)
        leg.store.index_marks = lambda conn, generation: (chunks, 0)  # type: ignore[assignment]
        generation = Generation(1, "f", "model2vec", "{}", DIMS, chunks, "t", "t")
        plan = leg.LegPlan(generation, None, matrix, facts, query, "q")  # type: ignore[arg-type]
        found = leg.meaning_leg(plan, 0, params, want, None)  # type: ignore[arg-type]
    finally:
        for name, original in saved.items():
            setattr(leg.vector_hits, name, original)
        leg.store.index_marks = saved_marks  # type: ignore[assignment]
    scores = np.einsum(
        "ij,j->i", matrix.vectors[:chunks].astype(np.float64), query.astype(np.float64)
    )
    passing = [c for c in range(1, chunks + 1) if passes(c) and scores[c - 1] > 0]
    expected = sorted(passing, key=lambda c: (-scores[c - 1], c))[:want]
    assert [s.candidate.chunk_id for s in found.found] == expected
