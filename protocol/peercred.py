"""Who is on the other end of a Unix socket, as the kernel tells it.

The daemon authorizes every connection on the peer's uid and the thin client checks the
daemon's uid the same way, which defeats someone squatting the socket path (another user
binding it first and answering in the daemon's place). Credentials are read once, right after
`accept()`/`connect()`, into typed fields and never re-parsed from text (the snapd
"dirty_sock" lesson).

The byte layouts are parsed by pure functions so both platforms' code paths are tested on any
machine; `read_peer_credentials` is the thin IO wrapper around them. Stdlib only: the thin
client imports this module, so it lives in `protocol`, not in the daemon.
"""

from __future__ import annotations

import socket
import sys

__all__ = [
    "PeerCredentials",
    "PeerCredentialsUnavailable",
    "parse_linux_ucred",
    "parse_xucred",
    "read_peer_credentials",
]

# The layouts are read field by field with `int.from_bytes` in the machine's byte order, not
# with `struct`: the thin client imports this module on every call, and `struct` (a C
# extension loaded from disk) would cost it ~0.4 ms.

# Linux `struct ucred { pid_t pid; uid_t uid; gid_t gid; }`: three 4-byte fields. uid/gid are
# read unsigned so that a real uid above 2**31 is not read as negative.
_UCRED_SIZE = 12

# macOS `struct xucred { u_int cr_version; uid_t cr_uid; short cr_ngroups;
# gid_t cr_groups[NGROUPS]; }` with NGROUPS = 16. The short is followed by two bytes of
# padding so the gid array is 4-aligned (cr_groups starts at byte 12): 4 + 4 + 2 + 2 + 16 * 4.
_XUCRED_SIZE = 76
_XUCRED_VERSION = 0
_PID_SIZE = 4

# CPython does not export these on macOS (values from <sys/un.h>).
_SOL_LOCAL = 0
_LOCAL_PEERCRED = 1
_LOCAL_PEERPID = 2

# What the kernel reports for "no credentials" (an unconnected socket): (uid_t)-1.
_NO_ID = 0xFFFFFFFF


def _field(raw: bytes, offset: int, size: int = 4, *, signed: bool = False) -> int:
    """The integer of `size` bytes at `offset`, in this machine's byte order (as the kernel
    wrote it)."""
    return int.from_bytes(raw[offset : offset + size], sys.byteorder, signed=signed)


class PeerCredentialsUnavailable(Exception):
    """The kernel gave no usable credentials for the peer; the caller must refuse it."""


class PeerCredentials(tuple[int, int, int]):
    """The peer's pid, uid and gid at connect time (immutable, typed fields).

    `pid` is 0 when the kernel cannot name the process (a peer in another pid namespace, or
    macOS before LOCAL_PEERPID). Authorize on `uid`; use `pid` for logs and process-tree
    checks only, since pids are reused.

    A tuple subclass rather than a dataclass: the thin client imports this module on every
    call, and `dataclasses` (with `inspect`) costs it about 4 ms.
    """

    __slots__ = ()

    def __new__(cls, pid: int, uid: int, gid: int) -> PeerCredentials:
        return super().__new__(cls, (pid, uid, gid))

    @property
    def pid(self) -> int:
        return self[0]

    @property
    def uid(self) -> int:
        return self[1]

    @property
    def gid(self) -> int:
        return self[2]

    def __repr__(self) -> str:
        return f"PeerCredentials(pid={self.pid}, uid={self.uid}, gid={self.gid})"


def parse_linux_ucred(raw: bytes) -> PeerCredentials:
    """Decode the bytes of `getsockopt(SOL_SOCKET, SO_PEERCRED)`."""
    if len(raw) != _UCRED_SIZE:
        raise PeerCredentialsUnavailable(
            f"SO_PEERCRED returned {len(raw)} bytes, expected {_UCRED_SIZE}"
        )
    pid, uid, gid = _field(raw, 0, signed=True), _field(raw, 4), _field(raw, 8)
    if uid == _NO_ID or gid == _NO_ID:
        raise PeerCredentialsUnavailable("SO_PEERCRED has no credentials (socket not connected?)")
    return PeerCredentials(pid=max(pid, 0), uid=uid, gid=gid)


def parse_xucred(raw: bytes, pid_raw: bytes) -> PeerCredentials:
    """Decode `LOCAL_PEERCRED` (a `struct xucred`) plus `LOCAL_PEERPID` (a `pid_t`).

    `pid_raw` may be empty when LOCAL_PEERPID is unavailable; the result then has what
    `getpeereid()` gives (uid, and the effective gid `cr_groups[0]`) and pid 0.
    """
    if len(raw) != _XUCRED_SIZE:
        raise PeerCredentialsUnavailable(
            f"LOCAL_PEERCRED returned {len(raw)} bytes, expected {_XUCRED_SIZE}"
        )
    version, uid, ngroups = _field(raw, 0), _field(raw, 4), _field(raw, 8, 2, signed=True)
    if version != _XUCRED_VERSION:
        raise PeerCredentialsUnavailable(f"unknown xucred version {version}")
    if ngroups < 1:
        # getpeereid() takes the gid from cr_groups[0]; without it there is no gid to report.
        raise PeerCredentialsUnavailable("xucred carries no groups")
    pid = 0
    if pid_raw:
        if len(pid_raw) != _PID_SIZE:
            raise PeerCredentialsUnavailable(
                f"LOCAL_PEERPID returned {len(pid_raw)} bytes, expected {_PID_SIZE}"
            )
        pid = _field(pid_raw, 0, signed=True)
    return PeerCredentials(pid=max(pid, 0), uid=uid, gid=_field(raw, 12))


def read_peer_credentials(sock: socket.socket) -> PeerCredentials:
    """The credentials of the process connected to `sock` (an AF_UNIX stream socket).

    Raises `PeerCredentialsUnavailable` whenever the kernel gives nothing usable, so that a
    lookup failure can never be mistaken for permission (polkit CVE-2021-3560).
    """
    try:
        if sys.platform == "linux":
            return parse_linux_ucred(
                sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED_SIZE)
            )
        if sys.platform == "darwin":
            raw = sock.getsockopt(_SOL_LOCAL, _LOCAL_PEERCRED, _XUCRED_SIZE)
            try:
                pid_raw = sock.getsockopt(_SOL_LOCAL, _LOCAL_PEERPID, _PID_SIZE)
            except OSError:
                # Only macOS < 10.8 lacks LOCAL_PEERPID; uid/gid still decide.
                pid_raw = b""
            return parse_xucred(raw, pid_raw)
    except OSError as exc:
        raise PeerCredentialsUnavailable(f"cannot read peer credentials: {exc}") from exc
    raise PeerCredentialsUnavailable(f"peer credentials are not supported on {sys.platform}")
