"""The listening Unix socket: bound by us in a private directory, or handed over by systemd.

Order matters for safety: the directory is made (or checked) 0700 and ours before anything
is bound in it, so the short window between bind() and chmod(0600) exposes nothing; an
existing socket file is removed only after a connect() proves no daemon answers on it
(tailscaled admits the race between those two steps; our home lock, taken first, closes it
for daemons sharing a home).
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import stat
from pathlib import Path
from typing import Final

from alpd.paths import ensure_private_dir

BACKLOG: Final = 1024


class SocketInUse(Exception):
    """A live daemon already answers on the socket path."""


def _answers(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(str(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True


def bind_unix_socket(path: Path) -> socket.socket:
    ensure_private_dir(path.parent)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        pass
    else:
        if not stat.S_ISSOCK(st.st_mode):
            raise SocketInUse(f"{path} exists and is not a socket; move it away")
        if _answers(path):
            raise SocketInUse(f"a daemon already answers on {path}")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(path))
        os.chmod(path, 0o600)
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise SocketInUse(f"{path} was taken while we started") from exc
        raise
    sock.setblocking(False)
    return sock
