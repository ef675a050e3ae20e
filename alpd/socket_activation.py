"""Listening sockets handed over by systemd (sd_listen_fds) or launchd, and env hygiene.

Under socket activation the service manager owns the listening socket, so clients connect
while alpd starts or restarts and nothing is lost. The fds are checked before use: alpd only
serves AF_UNIX stream sockets, and a unit that hands it anything else is a configuration
error worth failing loudly on.
"""

from __future__ import annotations

import ctypes
import errno
import os
import socket
import sys
from collections.abc import Mapping, MutableMapping

__all__ = [
    "SD_LISTEN_FDS_START",
    "SYSTEMD_ENV_VARS",
    "SocketActivationError",
    "launchd_listen_fds",
    "listen_fds",
    "scrub_systemd_env",
]

SD_LISTEN_FDS_START = 3
#: alpd serves one socket; a few more are tolerated (closed), thousands mean a broken unit
MAX_LISTEN_FDS = 16

# Everything systemd sets for alpd alone. A child that inherits them could send READY/WATCHDOG
# as alpd, or take fd 3 for its own listener: they are unset before any run starts.
SYSTEMD_ENV_VARS = (
    "NOTIFY_SOCKET",
    "LISTEN_FDS",
    "LISTEN_PID",
    "LISTEN_FDNAMES",
    "WATCHDOG_USEC",
    "WATCHDOG_PID",
)


class SocketActivationError(Exception):
    """The service manager passed sockets alpd cannot serve; fix the unit or plist."""


def listen_fds(environ: MutableMapping[str, str]) -> list[socket.socket]:
    """The sockets systemd passed to this process, in the order of the socket unit.

    Pops LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES whether or not they are for this
    process, and returns [] when not socket-activated.
    """
    listen_pid = environ.pop("LISTEN_PID", "")
    count = environ.pop("LISTEN_FDS", "")
    environ.pop("LISTEN_FDNAMES", None)
    if not listen_pid or listen_pid != str(os.getpid()):
        return []
    try:
        n = int(count)
    except ValueError:
        raise SocketActivationError(f"LISTEN_FDS={count!r} is not a number") from None
    if not 0 <= n <= MAX_LISTEN_FDS:
        raise SocketActivationError(
            f"LISTEN_FDS={count!r}: alpd takes 0 to {MAX_LISTEN_FDS} sockets; fix the socket unit"
        )
    return [_adopt(fd) for fd in range(SD_LISTEN_FDS_START, SD_LISTEN_FDS_START + n)]


def launchd_listen_fds(name: str) -> list[socket.socket]:
    """The sockets of the plist's `Sockets` entry `name`; [] when not started by launchd."""
    if sys.platform != "darwin":
        return []
    libc = ctypes.CDLL(None, use_errno=True)
    fds = ctypes.POINTER(ctypes.c_int)()
    count = ctypes.c_size_t()
    err = libc.launch_activate_socket(name.encode(), ctypes.byref(fds), ctypes.byref(count))
    # ENOENT: no such socket in the plist; ESRCH: this process is not a launchd job.
    if err in (errno.ENOENT, errno.ESRCH):
        return []
    if err:
        raise SocketActivationError(f"launch_activate_socket({name!r}): {os.strerror(err)}")
    try:
        return [_adopt(fds[i]) for i in range(count.value)]
    finally:
        libc.free(fds)


def scrub_systemd_env(env: Mapping[str, str]) -> dict[str, str]:
    """A copy of `env` without the variables in SYSTEMD_ENV_VARS, for a child process."""
    return {key: value for key, value in env.items() if key not in SYSTEMD_ENV_VARS}


def _adopt(fd: int) -> socket.socket:
    try:
        sock = socket.socket(fileno=fd)
    except OSError as exc:
        raise SocketActivationError(f"fd {fd} is not an open socket: {exc}") from exc
    if sock.family != socket.AF_UNIX or sock.type != socket.SOCK_STREAM:
        # An unknown family or type comes back as a plain int without a .name.
        kind = (
            f"{getattr(sock.family, 'name', sock.family)}/{getattr(sock.type, 'name', sock.type)}"
        )
        sock.detach()  # not ours to close: the manager may have passed it for a reason
        raise SocketActivationError(f"fd {fd} is {kind}; alpd serves AF_UNIX SOCK_STREAM")
    if not sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
        sock.detach()
        raise SocketActivationError(f"fd {fd} is a socket but not listening")
    name = sock.getsockname()
    if not isinstance(name, str) or not name.startswith("/"):
        # Runs are given the socket's path (ALP_SOCKET) to call back: an abstract name
        # (bytes starting with NUL) or no name at all cannot be handed on.
        sock.detach()
        raise SocketActivationError(
            f"fd {fd} is bound to {name!r}, not to a path; alpd needs a filesystem socket "
            "(ListenStream=/path)"
        )
    # Inherited fds are inheritable; agents alpd spawns must not hold the listener open.
    sock.set_inheritable(False)
    return sock
