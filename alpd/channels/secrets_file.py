"""Reading a channel's secret: from a file only its owner may read, or the environment.

A file that group or others may read (or that another user owns) is refused, not read: a
token it holds may already have leaked, and reading it would hide that. The value itself
is never logged; errors name the path, never the contents.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from alpd.channels.door import ChannelBroken

#: the most a secret file may hold (a token is ~50 bytes)
MAX_BYTES = 4096


def read_secret(path: str | None, env_name: str | None = None) -> str:
    """The secret in `path` (the environment's `env_name` first, when set)."""
    if env_name is not None and os.environ.get(env_name, "").strip():
        return os.environ[env_name].strip()
    if path is None:
        raise ChannelBroken(f"no secret: set {env_name} or the table's file key")
    file = Path(path).expanduser()
    try:
        fd = os.open(file, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        raise ChannelBroken(f"cannot read {file}: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if info.st_uid != os.getuid() or info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise ChannelBroken(
                f"{file} may be read by others (mode {stat.S_IMODE(info.st_mode):o}); "
                f"chmod 600 {file} (and replace the secret if others could read it)"
            )
        value = os.read(fd, MAX_BYTES).decode("utf-8", errors="replace").strip()
    finally:
        os.close(fd)
    if not value:
        raise ChannelBroken(f"{file} is empty")
    return value


__all__ = ["read_secret"]
