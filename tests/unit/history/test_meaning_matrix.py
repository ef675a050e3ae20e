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
    found = _top(matrix, scores, k)
    order = sorted(range(chunks), key=lambda i: (-scores[i], i))[:k]
    expected = [(i + 1, float(scores[i])) for i in order if scores[i] > 0]
    # equal cosines may come in either order; anything else is the full sort's
    assert sorted(found, key=lambda hit: (-hit[1], hit[0])) == expected
