"""`thread/export` and `thread/import`: a thread moved to another alp as one file
(docs/bundles.md)."""

from __future__ import annotations

import msgspec

from protocol.messages.base import AbsolutePath, Wire
from protocol.messages.threads import Thread


class ThreadExportParams(Wire):
    thread_id: str


class ThreadExportResult(Wire):
    thread_id: str
    #: the bundle, written under the daemon's home (0600) for the client to copy out and
    #: remove; one left there is removed by the next export after an hour
    path: str
    bytes: int
    #: records by table
    counts: dict[str, int]


class ThreadImportParams(Wire):
    #: the bundle file (read by the daemon: the caller is its owner)
    path: AbsolutePath


class ThreadImportResult(Wire):
    thread: Thread
    #: False: the thread was here already, as the bundle has it, and nothing changed
    imported: bool
    counts: dict[str, int]
    #: what was kept out, each with its reason (a handoff whose other thread is not here)
    left_out: list[str] = msgspec.field(default_factory=list)


__all__ = [
    "ThreadExportParams",
    "ThreadExportResult",
    "ThreadImportParams",
    "ThreadImportResult",
]
