"""Which workspace a caller is in: the git top level of its cwd, else the cwd itself."""

from __future__ import annotations

import os
from pathlib import Path


def workspace_of(cwd: str) -> str:
    """Walk up from `cwd` to the directory holding `.git` (a dir, or a file for worktrees)."""
    start = Path(os.path.realpath(cwd))
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return str(candidate)
    return str(start)
