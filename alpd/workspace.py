"""Which workspace a caller is in: the git top level of its cwd, else the cwd itself."""

from __future__ import annotations

import os
from pathlib import Path

from alpd.errors import InvalidArgument


def workspace_of(cwd: str) -> str:
    """Walk up from `cwd` to the directory holding `.git` (a dir, or a file for worktrees).

    A cwd the OS refuses to look at (a name over 255 bytes, a path over PATH_MAX once
    `/.git` is added: the wire bounds count characters, the kernel bytes) is
    INVALID_ARGUMENT naming the field.
    """
    start = Path(os.path.realpath(cwd))
    try:
        for candidate in (start, *start.parents):
            if (candidate / ".git").exists():
                return str(candidate)
    except OSError as exc:
        raise InvalidArgument(f"cwd {cwd[:80]!r}…: {exc.strerror}", field="cwd") from exc
    return str(start)
