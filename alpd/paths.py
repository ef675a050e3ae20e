"""The daemon's side of its paths: the config file of a home, and the private-directory check.

The defaults of the home and the socket are `protocol.paths` (the thin client resolves them
too). The socket lives in a directory only its owner can enter: the socket file's own mode is
set after `bind()`, and only a 0700 parent makes that window harmless (between `bind()` and
`chmod()` anyone could connect).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = [
    "UnsafeDirectory",
    "config_path",
    "ensure_private_dir",
]

_PRIVATE_MODE = 0o700


class UnsafeDirectory(Exception):
    """A directory alp must keep private exists in a state it cannot trust.

    The message names the path, what is wrong and what to do; alp never "repairs" such a
    directory itself, because someone else may have made it that way on purpose.
    """


def config_path(home: Path) -> Path:
    """The config file of a state home (`alpd --config FILE` overrides it)."""
    return home / "config.toml"


def ensure_private_dir(path: Path) -> Path:
    """Create `path` as a 0700 directory, or check that the existing one is private.

    Refuses (`UnsafeDirectory`) a symlink, a non-directory, a directory owned by another
    uid, and one with any group or other permission bit. Missing parents are created with
    default permissions, as `mkdir -p` does; only `path` itself is made private.
    """
    path = path.absolute()
    if not os.path.lexists(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.mkdir(path, _PRIVATE_MODE)
            # mkdir's mode is filtered by the umask; set the exact mode we promise.
            os.chmod(path, _PRIVATE_MODE)
        except FileExistsError:
            pass  # someone created it between our check and mkdir: judge what is there
    _check_private_dir(path)
    return path


def _check_private_dir(path: Path) -> None:
    # lstat, never stat: a symlink planted at the path must not be followed to its target.
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise UnsafeDirectory(
            f"{path} is a symlink; alp will not follow it for a private directory. "
            f"Remove it (rm {path}) or point ALP_HOME/ALP_SOCKET at a real directory."
        )
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafeDirectory(
            f"{path} exists and is not a directory. Move it away or choose another path."
        )
    uid = os.geteuid()
    if st.st_uid != uid:
        raise UnsafeDirectory(
            f"{path} is owned by uid {st.st_uid}, not by you (uid {uid}); another user may "
            f"have created it to intercept the socket. Have that user or root remove it, or "
            f"choose another path (ALP_SOCKET, ALP_HOME)."
        )
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o077:
        raise UnsafeDirectory(
            f"{path} has mode {mode:04o}; group and other must have no access. "
            f"Run: chmod 700 {path}"
        )
