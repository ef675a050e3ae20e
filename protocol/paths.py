"""Where alp keeps its state and its socket, as both programs resolve them.

The daemon and the thin client read the same defaults from the same environment, so the
client finds the daemon it would start. Stdlib only: the thin client imports this module.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["default_home", "default_socket_path"]

_SOCKET_NAME = "alpd.sock"


def _from_env(environ: Mapping[str, str], name: str) -> Path | None:
    # An empty variable counts as unset, as the XDG base directory spec treats its own.
    value = environ.get(name, "")
    return Path(value).expanduser().absolute() if value else None


def default_home(environ: Mapping[str, str] | None = None) -> Path:
    """The state home: `$ALP_HOME`, else `~/.alp`."""
    env = os.environ if environ is None else environ
    return _from_env(env, "ALP_HOME") or Path.home() / ".alp"


def default_socket_path(environ: Mapping[str, str] | None = None) -> Path:
    """`$ALP_SOCKET`, else `$XDG_RUNTIME_DIR/alp/alpd.sock`, else `/tmp/alp-$UID/alpd.sock`."""
    env = os.environ if environ is None else environ
    explicit = _from_env(env, "ALP_SOCKET")
    if explicit is not None:
        return explicit
    runtime_dir = env.get("XDG_RUNTIME_DIR", "")
    # The spec says a relative XDG_RUNTIME_DIR is invalid and must be ignored.
    if runtime_dir and os.path.isabs(runtime_dir):
        return Path(runtime_dir) / "alp" / _SOCKET_NAME
    return Path("/tmp") / f"alp-{os.getuid()}" / _SOCKET_NAME
