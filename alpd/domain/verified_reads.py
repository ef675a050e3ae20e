"""Checks of stored rows remembered by the whole of what was read (`VerifiedReads`).

A digest check is a pure function of the values it reads: read again byte for byte the
same, it gives the same answer. So the daemon need not hash again what it verified a moment
ago — the same memories given to root after root (`alpd.services.memory.root_context`), the
same transcript page read by every open view (`alpd.store.history.transcript`) — as long as
the answer is reused only for a read equal in every value to the one that was checked:

* what is remembered is, per key (an entry's id, a memory's id), the read as a whole (every
  column or version the check was given, the stored digest among them) and the check's
  result;
* a read is taken as verified only when it equals the remembered one (`==` over all of it:
  one changed character, digest or column is a different read, checked afresh, and its
  failure raised as it would be without this);
* a check that raises is not remembered, so a tampered row fails on every read of it;
* the remembered reads are bounded by their weight (`weigh`: characters, rows), the oldest
  dropped first.

A hit costs one dictionary look-up and one comparison (an entry's ~300 characters:
~0.4 µs, against ~2.5 µs to encode and hash them). Used from the event loop's thread and
the reader's: a look-up is one atomic dictionary read; a new read is stored under a lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["VerifiedReads"]

K = TypeVar("K", bound=Hashable)
R = TypeVar("R")
V = TypeVar("V")


class VerifiedReads(Generic[K, R, V]):
    """`check(read)`, remembered per key while the same read comes back (module docstring)."""

    def __init__(self, check: Callable[[R], V], weigh: Callable[[R], int], max_weight: int) -> None:
        self._check = check
        self._weigh = weigh
        self.max_weight = max_weight
        self._kept: dict[K, tuple[R, V, int]] = {}
        self._weight = 0
        self._lock = threading.Lock()

    def __call__(self, key: K, read: R) -> V:
        """`check(read)`'s result: remembered when `read` equals the read last verified
        under `key`, else checked now (and remembered when the check passes)."""
        kept = self._kept.get(key)
        if kept is not None and kept[0] == read:
            return kept[1]
        result = self._check(read)
        self._keep(key, read, result)
        return result

    @property
    def weight(self) -> int:
        return self._weight

    def __len__(self) -> int:
        return len(self._kept)

    def _keep(self, key: K, read: R, result: V) -> None:
        weight = self._weigh(read)
        if weight > self.max_weight:
            return
        with self._lock:
            replaced = self._kept.pop(key, None)
            if replaced is not None:
                self._weight -= replaced[2]
            while self._kept and self._weight + weight > self.max_weight:
                oldest = next(iter(self._kept))
                self._weight -= self._kept.pop(oldest)[2]
            self._kept[key] = (read, result, weight)
            self._weight += weight
