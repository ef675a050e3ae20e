"""One poller per bot token, across every alpd of this user (and every home).

Telegram hands each update to whichever `getUpdates` asks first: two pollers on one token
race and each sees half the messages (agent-deck's docs make the same point). So before it
polls, a channel takes an exclusive `flock` on a file named by a hash of its token (never
the token) in a directory shared by all of this user's alpds: `$XDG_RUNTIME_DIR/alp`, else
`/tmp/alp-UID` (0700). A second alpd finds it held and stays off (`refused`). The lock
dies with the process, so a kill -9 leaves nothing to clean up. Telegram's own 409 Conflict
(a poller elsewhere, on another machine) is the second line (alpd.channels.telegram).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from pathlib import Path

from alpd.channels.door import ChannelRefused


def lock_dir() -> Path:
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) / "alp" if runtime else Path(f"/tmp/alp-{os.getuid()}")
    base.mkdir(mode=0o700, parents=True, exist_ok=True)
    return base


def account_key(secret: str) -> str:
    """A stable name for the account behind `secret` that reveals nothing of it."""
    return hashlib.sha256(secret.encode()).hexdigest()[:16]


class TokenLock:
    def __init__(self, channel: str, secret: str) -> None:
        self.path = lock_dir() / f"{channel}-{account_key(secret)}.lock"
        self._fd: int | None = None

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 64).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise ChannelRefused(
                f"another alpd (pid {holder}) already polls this bot; one poller per token"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


__all__ = ["TokenLock", "account_key", "lock_dir"]
