"""The meaning leg's float32 product and the cheaper approximate first passes it could use
instead (docs/search.md, "Approximate passes, measured and not used"; alp now runs an exact
int8 pass, "An exact first pass"), on generated vectors shaped like bench_meaning's: each chunk
the normalised sum of the vectors of ~60 words drawn with the sessions corpus's word
frequencies (`bench.corpus.vocabulary`), each word a random 256-dimension vector (the
"realistic" generated model), a query two words of the corpus's vocabulary. Chunk counts:
ALP_BENCH_PASSES_CHUNKS (default "38000,125000": what the 300 MB and 1 GB corpora hold).

Baseline: the exact product alp runs (float32 matrix × query, BLAS on one thread, then the
best 80). Each pass is timed interleaved with it on the same queries, p50, and its recall is
the share of the exact best 80 it returns after rescoring its candidates exactly:

- int8: the matrix quantised per row to int8, multiplied block by block (cast to float32
  in a cache-sized buffer, numpy has no int8 product), the best 160 rescored;
- sign bits: 256 bits a chunk (32 bytes), Hamming distance to the query's, the best 2,000
  rescored;
- cluster probe: spherical k-means (√N lists, 8 rounds on the matrix), the query's closest
  1/8 of the lists scanned exactly.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable

from alpd.services.history.embedders import _import_numpy
from bench import Result
from bench.corpus import vocabulary

SIZES = [int(x) for x in os.environ.get("ALP_BENCH_PASSES_CHUNKS", "38000,125000").split(",")]
QUERIES = int(os.environ.get("ALP_BENCH_PASSES_QUERIES", "100"))
DIMS = 256
WORDS_PER_CHUNK = 60
BEST = 80
INT8_RESCORED = 2 * BEST
SIGN_RESCORED = 2000
PROBED = 1 / 8

_import_numpy()  # BLAS on one thread, as alpd imports it
import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402

Matrix = npt.NDArray[np.float32]


def _normalised(rows: Matrix) -> Matrix:
    norms = np.linalg.norm(rows, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    return rows / norms


def generated(chunks: int, rng: np.random.Generator) -> tuple[Matrix, Matrix]:
    """(chunk vectors, query vectors), both L2-normalised float32."""
    words, counts = vocabulary()
    model = rng.standard_normal((min(30_000, len(words)), DIMS)).astype(np.float32)
    weights = np.asarray(counts[: len(model)], dtype=np.float64)
    weights /= weights.sum()
    matrix = np.empty((chunks, DIMS), dtype=np.float32)
    for start in range(0, chunks, 2048):
        n = min(2048, chunks - start)
        ids = rng.choice(len(model), size=(n, WORDS_PER_CHUNK), p=weights)
        matrix[start : start + n] = model[ids].sum(axis=1)
    pairs = rng.integers(100, 3000, size=(QUERIES, 2))
    return _normalised(matrix), _normalised(model[pairs].sum(axis=1))


def best(scores: npt.NDArray[np.float32], k: int) -> npt.NDArray[np.intp]:
    return np.argpartition(scores, len(scores) - k)[-k:]


def rescored(
    matrix: Matrix, query: Matrix, candidates: npt.NDArray[np.intp]
) -> npt.NDArray[np.intp]:
    return candidates[best(matrix[candidates] @ query, BEST)]


class Int8Pass:
    def __init__(self, matrix: Matrix) -> None:
        scale = np.abs(matrix).max(axis=1) / 127
        scale[scale == 0] = 1.0
        self.codes = np.round(matrix / scale[:, None]).astype(np.int8)
        self.scale = scale.astype(np.float32)
        self.buffer = np.empty((2048, DIMS), dtype=np.float32)
        self.matrix = matrix

    def __call__(self, query: Matrix) -> npt.NDArray[np.intp]:
        out = np.empty(len(self.codes), dtype=np.float32)
        for start in range(0, len(self.codes), len(self.buffer)):
            block = self.codes[start : start + len(self.buffer)]
            buffer = self.buffer[: len(block)]
            np.copyto(buffer, block, casting="unsafe")
            np.matmul(buffer, query, out=out[start : start + len(block)])
        out *= self.scale
        return rescored(self.matrix, query, best(out, INT8_RESCORED))


class SignPass:
    def __init__(self, matrix: Matrix) -> None:
        self.bits = np.ascontiguousarray(np.packbits(matrix > 0, axis=1)).view(np.uint64)
        self.matrix = matrix

    def __call__(self, query: Matrix) -> npt.NDArray[np.intp]:
        mine = np.packbits(query > 0).view(np.uint64)
        counts = np.bitwise_count(self.bits ^ mine)
        distance = counts[:, 0] + counts[:, 1] + counts[:, 2] + counts[:, 3]
        nearest = np.argpartition(distance, SIGN_RESCORED)[:SIGN_RESCORED]
        return rescored(self.matrix, query, nearest)


class ClusterPass:
    def __init__(self, matrix: Matrix, rng: np.random.Generator) -> None:
        lists = int(len(matrix) ** 0.5)
        centroids = matrix[rng.choice(len(matrix), lists, replace=False)].copy()
        for _ in range(8):
            label = (matrix @ centroids.T).argmax(axis=1)
            sums = np.zeros_like(centroids)
            np.add.at(sums, label, matrix)
            centroids = _normalised(sums)
        order = np.argsort(label, kind="stable")
        self.matrix = np.ascontiguousarray(matrix[order])
        self.ids = order
        self.bounds = np.searchsorted(label[order], np.arange(lists + 1))
        self.centroids = centroids
        self.probed = max(1, int(lists * PROBED))

    def __call__(self, query: Matrix) -> npt.NDArray[np.intp]:
        lists = best(self.centroids @ query, self.probed)
        rows = np.concatenate([np.arange(self.bounds[i], self.bounds[i + 1]) for i in lists])
        scores = self.matrix[rows] @ query
        return np.asarray(self.ids[rows[best(scores, min(BEST, len(rows)))]])


def measure(size: int, rng: np.random.Generator) -> list[Result]:
    matrix, queries = generated(size, rng)

    def exact(query: Matrix) -> npt.NDArray[np.intp]:
        return best(matrix @ query, BEST)

    passes: dict[str, Callable[[Matrix], npt.NDArray[np.intp]]] = {
        "exact float32": exact,
        f"int8, best {INT8_RESCORED} rescored": Int8Pass(matrix),
        f"sign bits, best {SIGN_RESCORED} rescored": SignPass(matrix),
        f"cluster probe, {PROBED:.0%} of the lists": ClusterPass(matrix, rng),
    }
    times: dict[str, list[float]] = {name: [] for name in passes}
    recall: dict[str, list[float]] = {name: [] for name in passes}
    for turn, query in enumerate(queries):
        truth = set(exact(query).tolist())
        names = list(passes) if turn % 2 else list(reversed(passes))
        for name in names:
            started = time.perf_counter()
            found = passes[name](query)
            times[name].append((time.perf_counter() - started) * 1000)
            recall[name].append(len(truth & set(found.tolist())) / BEST)
    floor = statistics.median(times["exact float32"])
    results = []
    for name in passes:
        p50 = statistics.median(times[name])
        worst = min(recall[name])
        results.append(
            Result(f"meaning first pass, {size:,} chunks: {name} (recall of the best {BEST}: "
                   f"mean {statistics.mean(recall[name]):.2f}, worst {worst:.2f})",
                   round(p50, 2), "ms", round(floor, 2), round(p50 / floor, 2), "")
        )  # fmt: skip
    return results


def run() -> list[Result]:
    rng = np.random.default_rng(26)
    return [result for size in SIZES for result in measure(size, rng)]


if __name__ == "__main__":
    for result in run():
        print(result)
