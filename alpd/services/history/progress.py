"""Throttled `history/progress` notifications of a long sync or import."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import anyio

from protocol import messages as m

if TYPE_CHECKING:
    from alpd.services.history.sync import HistoryService

__all__ = ["PROGRESS_INTERVAL", "ProgressNotifier"]

#: at most one progress notification per this many seconds (plus the last one)
PROGRESS_INTERVAL: Final = 0.25


@dataclass(slots=True)
class ProgressNotifier:
    """Throttled `history/progress` notifications for one long operation."""

    history: HistoryService
    token: str | None
    operation: str
    thread_id: str | None = None
    total: int = 0
    done: int = 0
    added: int = 0
    bytes: int = 0
    total_bytes: int = 0
    base_bytes: int = 0
    path: str | None = None
    _last: float = field(default=0.0)

    def bytes_progress(self, consumed: int) -> None:
        self.bytes = self.base_bytes + consumed
        self.update()

    def update(self, *, force: bool = False, **changes: Any) -> None:
        for key, value in changes.items():
            setattr(self, key, value)
        now = anyio.current_time()
        if not force and now - self._last < PROGRESS_INTERVAL:
            return
        self._last = now
        self.history.publish_progress(
            m.HistoryProgress(
                token=self.token,
                operation="import" if self.operation == "import" else "sync",
                done=self.done,
                total=self.total,
                added=self.added,
                bytes=self.bytes,
                total_bytes=self.total_bytes,
                path=self.path,
            ),
            self.thread_id,
        )
