"""Where alp keeps its state and its socket, as both programs resolve them.

The daemon and the thin client read the same defaults from the same environment, so the
client finds the daemon it would start. Stdlib only, and strings rather than `pathlib`: the
thin client imports this module, and pathlib (with urllib.parse and ipaddress) would cost
every CLI call ~4 ms, an eighth of it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping

__all__ = [
    "absolute",
    "default_home",
    "default_socket_path",
    "foreign_socket_dir",
    "shared_socket_dir",
]

_SOCKET_NAME = "alpd.sock"


def _from_env(environ: Mapping[str, str], name: str) -> str | None:
    # An empty variable counts as unset, as the XDG base directory spec treats its own.
    value = environ.get(name, "")
    return absolute(value) if value else None


def absolute(path: str) -> str:
    """`path` with `~` expanded, made absolute against the working directory (not resolved:
    symlinks stay as they are, as `Path.expanduser().absolute()` leaves them)."""
    expanded = os.path.expanduser(path)
    return expanded if os.path.isabs(expanded) else os.path.join(os.getcwd(), expanded)


def default_home(environ: Mapping[str, str] | None = None) -> str:
    """The state home: `$ALP_HOME`, else `~/.alp`."""
    env = os.environ if environ is None else environ
    return _from_env(env, "ALP_HOME") or os.path.join(os.path.expanduser("~"), ".alp")


def default_socket_path(environ: Mapping[str, str] | None = None) -> str:
    """`$ALP_SOCKET`, else `$XDG_RUNTIME_DIR/alp/alpd.sock`, else `/tmp/alp-$UID/alpd.sock`,
    unless something not ours is at `/tmp/alp-$UID`: then `$ALP_HOME/run/alpd.sock`."""
    env = os.environ if environ is None else environ
    explicit = _from_env(env, "ALP_SOCKET")
    if explicit is not None:
        return explicit
    runtime_dir = env.get("XDG_RUNTIME_DIR", "")
    # The spec says a relative XDG_RUNTIME_DIR is invalid and must be ignored.
    if runtime_dir and os.path.isabs(runtime_dir):
        return os.path.join(runtime_dir, "alp", _SOCKET_NAME)
    shared = shared_socket_dir()
    if foreign_socket_dir(shared) is not None:
        return os.path.join(default_home(env), "run", _SOCKET_NAME)
    return os.path.join(shared, _SOCKET_NAME)


def shared_socket_dir() -> str:
    """`/tmp/alp-$UID`: the socket's directory when there is no runtime directory."""
    return os.path.join("/tmp", f"alp-{os.getuid()}")


def foreign_socket_dir(path: str) -> str | None:
    """What is wrong with `path` if it is not a directory of ours (None when it is, or when
    nothing is there).

    /tmp is everyone's: another user can create `/tmp/alp-<your uid>` first (a directory of
    theirs, a symlink, a file), and the sticky bit keeps you from removing it. Daemon and
    client then both use `$ALP_HOME/run/alpd.sock`, so that user cannot stop alp. A directory
    of ours with a wrong mode is not foreign: the daemon refuses it and says `chmod 700`.
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be examined ({exc.strerror})"
    if stat.S_ISLNK(st.st_mode):
        return "is a symlink"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a directory"
    if st.st_uid != os.geteuid():
        return f"is owned by uid {st.st_uid}, not by you (uid {os.geteuid()})"
    return None
