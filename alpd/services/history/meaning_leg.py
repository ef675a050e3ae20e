"""The meaning leg of a search (docs/search.md): the answering generation's vectors in
memory (`Matrix`, float32, loaded on the first search and extended as the index grows), the
query's vector against all of them (numpy, brute force), and the best chunks filtered in SQL
with keyword search's filters, 4 × more while too few pass.

`MeaningIndex.plan` prepares a search on the loop's side (no hop: the query's vector comes
from its cache, or from an endpoint in a worker thread); `meaning_leg` runs inside the
search's one hop to the reader's thread, and `MeaningIndex.adopt` keeps what it learnt (the
extended matrix, the query's vector). Ids only: the hits a page shows are made for those
shown (`alpd.store.history.vectors.chunk_hits`).
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from alpd.store.db import BlockingTx
from alpd.store.history import vectors as store
from protocol import messages as m

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from alpd.services.history.embedders import Embedder

__all__ = ["LegPlan", "LegResult", "Matrix", "Product", "Scored", "empty_matrix", "meaning_leg"]


@dataclass
class Matrix:
    """The answering generation's vectors in memory: rows `[:count]` of `vectors`, the
    chunk id of each row in `ids`. Grown by appending (a search holds the arrays it
    started with)."""

    generation: int
    ids: npt.NDArray[np.int64]
    vectors: npt.NDArray[np.float32]
    count: int
    loaded_through: int


@dataclass(frozen=True)
class LegPlan:
    generation: store.Generation
    embedder: Embedder
    matrix: Matrix
    #: the query's vector, or None: the hop embeds it (a local model, microseconds)
    vector: npt.NDArray[np.float32] | None
    text: str


@dataclass(frozen=True)
class Scored:
    candidate: store.Candidate
    cosine: float


@dataclass(frozen=True)
class LegResult:
    #: the best chunk of each unit that passed the filters, best first, at most `want`
    found: list[Scored]
    matrix: Matrix
    vector: npt.NDArray[np.float32]
    text: str


class Product:
    """The query's product with the matrix, computing on the product thread while the
    reader's thread runs the keyword leg's statement (numpy and SQLite both release the GIL:
    on two cores the hybrid search costs about the longer of the two, not their sum)."""

    def __init__(self, plan: LegPlan, conn: BlockingTx, parallel: bool) -> None:
        self.plan = plan
        self.matrix = _extended(plan.matrix, plan.generation, conn)
        self._future: Future[tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]] | None
        self._future = _product_thread().submit(self._compute) if parallel else None

    def _compute(self) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        vector = self.plan.vector
        if vector is None:
            vector = self.plan.embedder.embed([self.plan.text])[0]
        return vector, _scores(self.matrix, vector)

    def result(self) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        return self._compute() if self._future is None else self._future.result()


_POOL: list[ThreadPoolExecutor] = []
_POOL_LOCK = threading.Lock()


def _product_thread() -> ThreadPoolExecutor:
    """One thread for the products (a search waits for its own before the next hop runs,
    so at most one is queued)."""
    with _POOL_LOCK:
        if not _POOL:
            _POOL.append(ThreadPoolExecutor(max_workers=1, thread_name_prefix="alp-meaning"))
        return _POOL[0]


def meaning_leg(
    product: Product, uid: int, params: m.HistorySearchParams, want: int, conn: BlockingTx
) -> LegResult:
    """The meaning leg, on the reader's thread inside a search's one hop, once `product`
    (the matrix extended with the vectors embedded since it was loaded, the query embedded
    when not cached, the product) is done: the best chunks filtered in SQL, 4 × more while
    too few pass. Ids only: the page's hits are made for those shown
    (`store.chunk_hits`)."""
    vector, scores = product.result()
    matrix = product.matrix
    candidates = want
    while True:
        ranked = _top(matrix, scores, candidates)
        cosine = dict(ranked)
        chosen = [c for c, _ in ranked]
        best: dict[int, Scored] = {}
        for candidate in store.meaning_candidates(conn, uid, params, chosen):
            if candidate.unit_id not in best:
                best[candidate.unit_id] = Scored(candidate, cosine[candidate.chunk_id])
        if len(best) >= want or len(ranked) < candidates:
            return LegResult(list(best.values())[:want], matrix, vector, product.plan.text)
        candidates *= 4


def empty_matrix(generation: store.Generation) -> Matrix:
    import numpy as np

    return Matrix(
        generation.id,
        np.zeros(0, dtype=np.int64),
        np.zeros((0, generation.dims), dtype=np.float32),
        0,
        0,
    )


def _extended(matrix: Matrix, generation: store.Generation, conn: BlockingTx) -> Matrix:
    through = store.embedded_through(conn, generation.id)
    while matrix.loaded_through < through:
        rows = store.vectors_of(
            conn, generation=generation.id, after_chunk=matrix.loaded_through, through=through
        )
        if not rows:
            return replace(matrix, loaded_through=through)
        matrix = _appended(matrix, rows, generation.dims)
    return matrix


def _appended(matrix: Matrix, rows: list[tuple[int, bytes]], dims: int) -> Matrix:
    import numpy as np

    need = matrix.count + len(rows)
    ids, vectors = matrix.ids, matrix.vectors
    if need > len(ids):
        capacity = max(need, 2 * len(ids), 1024)
        ids = np.resize(ids, capacity)
        grown = np.zeros((capacity, dims), dtype=np.float32)
        grown[: matrix.count] = vectors[: matrix.count]
        vectors = grown
    block = np.frombuffer(b"".join(vector for _, vector in rows), dtype="<f2").reshape(-1, dims)
    ids[matrix.count : need] = [chunk_id for chunk_id, _ in rows]
    vectors[matrix.count : need] = block
    return Matrix(matrix.generation, ids, vectors, need, rows[-1][0])


def _scores(matrix: Matrix, query: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    scores: npt.NDArray[np.float32] = matrix.vectors[: matrix.count] @ query
    return scores


def _top(matrix: Matrix, scores: npt.NDArray[np.float32], k: int) -> list[tuple[int, float]]:
    """The best `k` chunks (id, cosine), best first; a chunk no closer than orthogonal to
    the query is no hit."""
    import numpy as np

    if matrix.count == 0:
        return []
    k = min(k, matrix.count)
    best = np.argpartition(-scores, k - 1)[:k] if k < matrix.count else np.arange(matrix.count)
    best = best[np.argsort(-scores[best], kind="stable")]
    return [(int(matrix.ids[i]), float(scores[i])) for i in best if scores[i] > 0.0]
