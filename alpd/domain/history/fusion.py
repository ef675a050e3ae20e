"""Reciprocal rank fusion of the keyword and the meaning legs of a hybrid search (pure).

Each leg is a ranked list of keys (best first). A key's fused score is the sum, over the
legs that found it, of `1 / (k + rank)` with ranks from 1 and `k = 60` (Cormack, Clarke and
Büttcher, SIGIR 2009; the value agentsview, sqlite-vec's hybrid example and most peers use):
k damps the head of each list so neither leg's top hit decides alone, and a key both legs
found rises above keys only one found. Ties keep the order of first appearance (keyword leg
first), so the result is deterministic.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Final, TypeVar

__all__ = ["RRF_K", "fuse"]

RRF_K: Final = 60

K = TypeVar("K", bound=Hashable)


def fuse(legs: Sequence[Sequence[K]], k: int = RRF_K) -> list[tuple[K, float]]:
    """The keys of all legs with their fused scores, best first (duplicates within one leg
    count at their best rank)."""
    scores: dict[K, float] = {}
    for leg in legs:
        seen: set[K] = set()
        for rank, key in enumerate(leg, start=1):
            if key in seen:
                continue
            seen.add(key)
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    order = {key: i for i, key in enumerate(scores)}
    return sorted(scores.items(), key=lambda item: (-item[1], order[item[0]]))
