"""The meaning leg's matrix and its exact best k (docs/search.md, "An exact first pass").

The matrix holds each chunk's vector as stored (float16) and, beside it, an int8 code of it
(per row: `code × step ≈ vector`, step = the row's largest magnitude / 127). A query is
coded the same way; the product of the codes is a quarter of the bytes of a float32 product
(simsimd's int8 kernel when installed, else numpy in bounded blocks: the same integers), and
it is within a known distance of the true cosine:

    q·x − q′·x′ = (q − q′)·x′ + q·(x − x′),  so  |q·x − q′·x′| ≤ ‖q − q′‖·‖x′‖ + ‖q‖·‖x − x′‖

with x′ = code × step. `bound` is that right side over the whole matrix (its largest ‖x′‖
and ‖x − x′‖, kept as rows are appended). Among any rows, the k whose approximate scores are
highest score at least τ − bound in truth (τ: the k-th highest approximate score), so a row
whose approximate score is under τ − 2·bound cannot be among the best k: only the rows at or
above it are scored exactly (float64, from the stored float16 values), and the best k of
them is the best k of all, ties broken by chunk id. The ranking is the exact one; only the
work to find it is smaller (`tests/unit/history/test_meaning_matrix.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, TypeAlias

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["Matrix", "Ranking", "appended", "empty_matrix"]

#: the largest code (symmetric: -127..127)
CODE_MAX: Final = 127
#: covers the float64 rounding of the approximate and exact scores and of the bound itself
#: (each ~1e-14 at 256 dimensions)
SLACK: Final = 1e-9
#: rows coded or rescored at a time: every temporary array is bounded (4,096 × 256 float64
#: is 8 MiB)
BLOCK: Final = 4096


@dataclass
class Matrix:
    """The answering generation's vectors in memory: rows `[:count]` of `vectors` (float16,
    as stored), `codes` (int8) and `steps` (code × step ≈ vector), the chunk id of each row
    in `ids` (ascending: rows are appended in chunk order). Grown by appending (a search
    holds the arrays it started with). `error` and `norm`: the largest ‖x − x′‖ and ‖x′‖ of
    its rows, for the bound."""

    generation: int
    ids: npt.NDArray[np.int64]
    vectors: npt.NDArray[np.float16]
    codes: npt.NDArray[np.int8]
    steps: npt.NDArray[np.float64]
    count: int
    loaded_through: int
    error: float = 0.0
    norm: float = 0.0
    #: scratch arrays of a search's scores (2 × capacity float64), kept for the next search:
    #: fresh megabytes are page faults, which cost this VM more than the product (a search's
    #: first pass 1.5-2.1 ms with them reused, 4-5.5 ms allocated each time)
    spare: list[npt.NDArray[np.float64]] = field(default_factory=list)
    #: how many rows of the arrays hold data, shared by the matrices that share the arrays
    written: list[int] = field(default_factory=lambda: [0])


def empty_matrix(generation: int, dims: int) -> Matrix:
    import numpy as np

    return Matrix(
        generation,
        np.zeros(0, dtype=np.int64),
        np.zeros((0, dims), dtype=np.float16),
        np.zeros((0, dims), dtype=np.int8),
        np.zeros(0, dtype=np.float64),
        0,
        0,
    )


def _coded(
    x: npt.NDArray[np.float64],
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float64], float, float]:
    """Rows `x` coded: their codes, steps, and the largest ‖x − x′‖ and ‖x′‖ among them."""
    import numpy as np

    top = np.abs(x).max(axis=1) if x.shape[1] else np.zeros(len(x))
    steps = np.where(top > 0, top / CODE_MAX, 1.0)
    codes = np.clip(np.rint(x / steps[:, None]), -CODE_MAX, CODE_MAX)
    decoded = codes * steps[:, None]
    error = float(np.sqrt(((x - decoded) ** 2).sum(axis=1)).max(initial=0.0))
    norm = float(np.sqrt((decoded**2).sum(axis=1)).max(initial=0.0))
    return codes.astype(np.int8), steps, error, norm


def appended(matrix: Matrix, rows: Sequence[tuple[int, bytes]], dims: int) -> Matrix:
    """`matrix` with `rows` (chunk id, float16 little-endian vector, …) after its own, coded.
    Written in place past `count` only while no other matrix sharing the arrays wrote there
    (`written`; two searches that started from the same matrix may both extend it), else
    into new arrays."""
    import numpy as np

    need = matrix.count + len(rows)
    ids, vectors, codes, steps = matrix.ids, matrix.vectors, matrix.codes, matrix.steps
    written = matrix.written
    if need > len(ids) or written[0] != matrix.count:
        capacity = max(need, 2 * len(ids), 1024)
        ids = np.resize(ids[: matrix.count], capacity)
        steps = np.resize(steps[: matrix.count], capacity)
        grown_vectors = np.zeros((capacity, dims), dtype=np.float16)
        grown_vectors[: matrix.count] = vectors[: matrix.count]
        grown_codes = np.zeros((capacity, dims), dtype=np.int8)
        grown_codes[: matrix.count] = codes[: matrix.count]
        vectors, codes, written = grown_vectors, grown_codes, [0]
    written[0] = need
    block = np.frombuffer(b"".join(row[1] for row in rows), dtype="<f2").reshape(-1, dims)
    ids[matrix.count : need] = [row[0] for row in rows]
    vectors[matrix.count : need] = block
    error, norm = matrix.error, matrix.norm
    for start in range(0, len(rows), BLOCK):
        part = block[start : start + BLOCK].astype(np.float64)
        at = matrix.count + start
        codes[at : at + len(part)], steps[at : at + len(part)], e, n = _coded(part)
        error, norm = max(error, e), max(norm, n)
    spare = matrix.spare if len(ids) == len(matrix.ids) else []
    return Matrix(
        matrix.generation,
        ids,
        vectors,
        codes,
        steps,
        need,
        rows[-1][0],
        error,
        norm,
        spare,
        written,
    )


#: a kernel writes the products of the codes with the query's code into its third argument
Kernel: TypeAlias = (
    "Callable[[npt.NDArray[np.int8], npt.NDArray[np.int8], npt.NDArray[np.float64]], None]"
)


def _numpy_dots(
    codes: npt.NDArray[np.int8], query: npt.NDArray[np.int8], out: npt.NDArray[np.float64]
) -> None:
    """The code products into `out`, in blocks through float32 (exact: every partial sum is
    an integer under 2²⁴ up to 1,040 dimensions)."""
    import numpy as np

    q = query.astype(np.float32)
    for start in range(0, len(codes), BLOCK):
        out[start : start + BLOCK] = codes[start : start + BLOCK].astype(np.float32) @ q


def _simsimd_dots(
    codes: npt.NDArray[np.int8], query: npt.NDArray[np.int8], out: npt.NDArray[np.float64]
) -> None:
    import simsimd

    if len(codes):
        simsimd.cdist(query[None, :], codes, "dot", threads=1, out=out.reshape(1, len(out)))


def code_kernel() -> Kernel:
    """simsimd's int8 dot product when installed (the `semantic` extra), else numpy's."""
    try:
        import simsimd  # noqa: F401
    except ImportError:
        return _numpy_dots
    return _simsimd_dots


class Ranking:
    """One query against a matrix: every row's approximate score (one pass over the codes),
    then the exact best k of all rows or of some (`top`). `close` gives its scratch arrays
    back to the matrix for the next search."""

    def __init__(
        self, matrix: Matrix, query: npt.NDArray[np.float32], kernel: Kernel | None = None
    ) -> None:
        import numpy as np

        self.matrix = matrix
        count = matrix.count
        self.ids = matrix.ids[:count]
        self.query = np.asarray(query, dtype=np.float64)
        codes, steps, error, _ = _coded(self.query[None, :])
        try:
            self._scratch = matrix.spare.pop()
        except IndexError:
            self._scratch = np.empty((2, len(matrix.ids)), dtype=np.float64)
        #: the approximate scores over the query's step (one multiply over the rows fewer)
        self.scaled = self._scratch[0, :count]
        (kernel or code_kernel())(matrix.codes[:count], codes[0], self.scaled)
        np.multiply(self.scaled, matrix.steps[:count], out=self.scaled)
        self.step = float(steps[0])
        query_norm = float(np.sqrt((self.query**2).sum()))
        self.bound = error * matrix.norm + query_norm * matrix.error + SLACK
        #: the last best k of all rows found, (k, best): a hybrid search finds its first on
        #: the loop's thread and uses it in the reader's (`meaning_leg.first_pass`)
        self._best: tuple[int, list[tuple[int, float]]] | None = None

    def close(self) -> None:
        """Give the scratch arrays back (at most two kept: searches run one at a time on
        the reader's thread)."""
        if len(self.matrix.spare) < 2:
            self.matrix.spare.append(self._scratch)

    @property
    def approx(self) -> npt.NDArray[np.float64]:
        """Every row's approximate score, within `bound` of its cosine."""
        return self.scaled * self.step

    def exact(self, rows: npt.NDArray[np.intp]) -> npt.NDArray[np.float64]:
        """The cosines of `rows`, from the stored values in float64 (each row's sum in the
        same order whichever rows are asked with it: einsum, not a BLAS kernel whose order
        may depend on the shape)."""
        import numpy as np

        out = np.empty(len(rows), dtype=np.float64)
        for start in range(0, len(rows), BLOCK):
            part = self.matrix.vectors[rows[start : start + BLOCK]].astype(np.float64)
            out[start : start + BLOCK] = np.einsum("ij,j->i", part, self.query)
        return out

    def top(self, k: int, rows: npt.NDArray[np.intp] | None = None) -> list[tuple[int, float]]:
        """The best `k` of `rows` (all rows when None) as (chunk id, cosine), best first, ties
        by chunk id; a chunk no closer than orthogonal to the query is no hit."""
        if rows is None and self._best is not None and self._best[0] == k:
            return list(self._best[1])
        best = self._top(k, rows)
        if rows is None:
            self._best = (k, best)
        return list(best)

    def _top(self, k: int, rows: npt.NDArray[np.intp] | None) -> list[tuple[int, float]]:
        import numpy as np

        scaled = self.scaled if rows is None else self.scaled[rows]
        count = len(scaled)
        if count == 0 or k <= 0:
            return []
        if k < count:
            if rows is None:  # partitioned in the scratch row, not a fresh copy
                kth = self._scratch[1, :count]
                kth[:] = scaled
                kth.partition(count - k)
                tau = kth[count - k]
            else:
                tau = np.partition(scaled, count - k)[count - k]
            picked = np.flatnonzero(scaled >= tau - 2 * self.bound / self.step)
        else:
            picked = np.arange(count)
        if rows is not None:
            picked = rows[picked]
        exact = self.exact(picked)
        ids = self.ids[picked]
        order = np.lexsort((ids, -exact))[:k]
        return [(int(ids[i]), float(exact[i])) for i in order if exact[i] > 0.0]
