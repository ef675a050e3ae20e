"""One alpd per state home: an exclusive `flock` on `$ALP_HOME/alpd.lock` holding our pid.

flock (not a pid file alone) because the kernel drops it when the holder dies, even by
kill -9, so a crashed daemon never leaves a stale lock behind.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


class HomeLocked(Exception):
    """Another alpd holds this state home."""

    def __init__(self, path: Path, holder: str) -> None:
        super().__init__(
            f"another alpd (pid {holder or 'unknown'}) already serves this state home; "
            f"lock file {path}"
        )
        self.holder = holder


class HomeLock:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
            os.close(fd)
            raise HomeLocked(self.path, holder) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
