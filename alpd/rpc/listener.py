"""The listening Unix socket: bound by us in a private directory, or handed over by systemd.

Order matters for safety: the directory is made (or checked) 0700 and ours before anything
is bound in it, so the short window between bind() and chmod(0600) exposes nothing; an
existing socket file is removed only after a connect() proves no daemon answers on it
(tailscaled admits the race between those two steps; our home lock, taken first, closes it
for daemons sharing a home).

Accepting must outlive running out of file descriptors: `accept()` failing with EMFILE (the
process limit), ENFILE (the system's), ENOBUFS or ENOMEM is logged and retried after a pause
that doubles up to a second, instead of ending the daemon; the pending peers wait in the
backlog meanwhile. A connection the daemon will not serve (a foreign uid, one over the
connection cap) is told why and closed at once, never held open waiting for its peer, so a
crowd of refused peers costs no descriptors. The cap itself is derived from RLIMIT_NOFILE,
leaving `FD_RESERVE` descriptors for the database, the runs alpd supervises and the files it
reads, and `WEB_RESERVE` for the web page's connections (which have a cap of their own).
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Final, NoReturn

import anyio
import structlog

from alpd.paths import ensure_private_dir

BACKLOG: Final = 1024
#: descriptors kept free of connections: SQLite (database, WAL, shm per connection), the
#: lock, the event loop, the pipes and log files of supervised runs, transcripts being read
FD_RESERVE: Final = 256
#: descriptors kept for the web page: its connection cap (at most 64, alpd.web.connections)
#: and what one wake-up of its listener accepts before the cap is enforced (its backlog, 64)
WEB_RESERVE: Final = 128
#: connections of one uid at most, whatever the fd limit (each holds buffers and a task)
MAX_CONNECTIONS: Final = 4096
MIN_CONNECTIONS: Final = 8
#: connections accepted per turn of the loop at most
ACCEPT_BATCH: Final = 64
ACCEPT_BACKOFF_FIRST: Final = 0.01
ACCEPT_BACKOFF_MAX: Final = 1.0

#: the process or the system is out of something a pause gives back
_EXHAUSTED: Final = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
#: one pending connection died before we took it; the next one is fine
_ABORTED: Final = frozenset({errno.ECONNABORTED, errno.EPROTO, errno.EINTR})

log = structlog.get_logger("alpd.rpc")


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


def connection_cap(fd_limit: int) -> int:
    """How many connections one uid may hold under a soft RLIMIT_NOFILE of `fd_limit`."""
    return max(MIN_CONNECTIONS, min(MAX_CONNECTIONS, fd_limit - FD_RESERVE - WEB_RESERVE))


async def accept_forever(
    listener: socket.socket, admit: Callable[[socket.socket], None]
) -> NoReturn:
    """Accept connections on a non-blocking `listener`, up to `ACCEPT_BATCH` per turn of the
    loop, and hand each to `admit` (synchronous: it refuses the peer or puts it in the lobby,
    `alpd.rpc.lobby`, where it costs no task until it sends a frame)."""
    backoff = ACCEPT_BACKOFF_FIRST
    while True:
        for _ in range(ACCEPT_BATCH):
            try:
                peer, _ = listener.accept()
            except BlockingIOError:
                await anyio.wait_readable(listener)
                break
            except OSError as exc:
                if exc.errno in _ABORTED:
                    continue
                if exc.errno not in _EXHAUSTED:
                    raise
                log.warning("accept_failed", error=os.strerror(exc.errno), retry_in=backoff)
                await anyio.sleep(backoff)
                backoff = min(backoff * 2, ACCEPT_BACKOFF_MAX)
                break
            backoff = ACCEPT_BACKOFF_FIRST
            peer.setblocking(False)
            admit(peer)
        else:
            # A full batch: let the loop serve what is ready (the owner's request among
            # them) before the next one. Admitting is cheap (no task), so the owner's fresh
            # connection waits behind at most a batch of the crowd's reconnections.
            await anyio.lowlevel.checkpoint()


def refuse(peer: socket.socket, reply: bytes) -> None:
    """Send `reply` if the socket takes it now, then close — without waiting on the peer.

    What the peer already sent is read first (without waiting): closing a Unix socket with
    unread bytes makes the peer's next read fail with ECONNRESET instead of returning our
    reply and EOF.
    """
    _drain(peer)
    with contextlib.suppress(OSError):
        peer.send(reply)
        peer.shutdown(socket.SHUT_WR)
    _drain(peer)
    peer.close()


def _drain(peer: socket.socket, max_reads: int = 16) -> None:
    with contextlib.suppress(OSError):
        for _ in range(max_reads):
            if not peer.recv(65536):
                return
