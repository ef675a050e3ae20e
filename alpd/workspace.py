"""Which workspace a caller is in: the git top level of its cwd, else the cwd itself; and
which repository a checkout is (`repository_of`, asked of git)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from alpd.domain.threads.repository import Repository, normalise_remote, subpath_within
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


#: how long one git question may take (a checkout on a hung network mount must not hold a
#: continue for ever)
_GIT_TIMEOUT = 5.0


def repository_of(path: str) -> Repository | None:
    """The repository identity of the checkout holding `path`: its remote (`origin`, else
    the first one git lists) normalised, and `path`'s place within the checkout. None when
    `path` is not in a git checkout, the checkout has no remote, or git cannot say (blocking:
    run it off the event loop)."""
    if workspace_of(path) == os.path.realpath(path) and not os.path.exists(
        os.path.join(path, ".git")
    ):
        return None  # no `.git` at or above it: not a checkout (no git process for that)
    top = _git(path, "rev-parse", "--show-toplevel")
    remotes = _git(path, "remote")
    if not top or not remotes:
        return None
    names = remotes.split()
    name = "origin" if "origin" in names else names[0]
    url = _git(path, "config", "--get", f"remote.{name}.url")
    if not url:
        return None
    try:
        subpath = subpath_within(os.path.realpath(top), os.path.realpath(path))
    except ValueError:
        return None
    return Repository(normalise_remote(url), subpath)


def _git(cwd: str, *args: str) -> str | None:
    if not os.path.isdir(cwd):
        return None
    try:
        done = subprocess.run(
            # alpd may run as root over a person's checkouts: git's ownership check would
            # refuse to read them, and only their config is read here
            ["git", "-c", "safe.directory=*", "-C", cwd, *args],
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"},
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None
