"""Reciprocal rank fusion of the keyword and the meaning legs of a hybrid search (pure).

Each leg is a ranked list of keys (best first). A key's fused score is the sum, over the
legs that found it, of `1 / (k + rank)` with ranks from 1 and `k = 60` (Cormack, Clarke and
Büttcher, SIGIR 2009; the value agentsview, sqlite-vec's hybrid example and most peers use):
k damps the head of each list so neither leg's top hit decides alone, and a key both legs
found rises above keys only one found. Ties keep the order of first appearance (keyword leg
first), so the result is deterministic.

Hits a sub-agent's execution wrote are **moved down** `DEMOTE_RANKS` ranks in each leg
(agentsview does the same, by 5): a delegated child often repeats what its lead asked and
then reported, so the person's own conversation comes first among near-equals, while a
sub-agent's hit that both legs rank high still shows.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Sequence
from typing import Final, TypeVar

__all__ = ["DEMOTE_RANKS", "RRF_K", "fuse"]

RRF_K: Final = 60
DEMOTE_RANKS: Final = 5

K = TypeVar("K", bound=Hashable)


def fuse(
    legs: Sequence[Sequence[K]],
    k: int = RRF_K,
    demoted: Collection[K] = (),
    demote_by: int = DEMOTE_RANKS,
) -> list[tuple[K, float]]:
    """The keys of all legs with their fused scores, best first (duplicates within one leg
    count at their best rank; a key in `demoted` counts `demote_by` ranks lower)."""
    scores: dict[K, float] = {}
    for leg in legs:
        seen: set[K] = set()
        for rank, key in enumerate(leg, start=1):
            if key in seen:
                continue
            seen.add(key)
            moved = rank + demote_by if key in demoted else rank
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + moved)
    order = {key: i for i, key in enumerate(scores)}
    return sorted(scores.items(), key=lambda item: (-item[1], order[item[0]]))
