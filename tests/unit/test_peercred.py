"""Peer credentials: both platforms' byte layouts parsed from crafted bytes, plus a real
socketpair on Linux."""

from __future__ import annotations

import os
import socket
import struct
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.peercred import (
    PeerCredentials,
    PeerCredentialsUnavailable,
    parse_linux_ucred,
    parse_xucred,
    read_peer_credentials,
)


def _xucred(uid: int, groups: list[int], *, version: int = 0, ngroups: int | None = None) -> bytes:
    padded = (groups + [0] * 16)[:16]
    count = len(groups) if ngroups is None else ngroups
    return struct.pack("=IIh2x16I", version, uid, count, *padded)


def test_linux_ucred_is_decoded_in_pid_uid_gid_order() -> None:
    raw = struct.pack("=iII", 4242, 1000, 100)
    assert parse_linux_ucred(raw) == PeerCredentials(pid=4242, uid=1000, gid=100)


def test_linux_ucred_reads_uid_above_2_pow_31_as_unsigned() -> None:
    raw = struct.pack("=iII", 1, 0x8000_0001, 0x8000_0002)
    creds = parse_linux_ucred(raw)
    assert (creds.uid, creds.gid) == (0x8000_0001, 0x8000_0002)


def test_linux_ucred_pid_zero_from_another_pid_namespace_keeps_uid() -> None:
    assert parse_linux_ucred(struct.pack("=iII", 0, 1000, 1000)).pid == 0


@pytest.mark.parametrize("raw", [b"", b"\x00" * 11, b"\x00" * 13])
def test_linux_ucred_of_wrong_length_fails_closed(raw: bytes) -> None:
    with pytest.raises(PeerCredentialsUnavailable):
        parse_linux_ucred(raw)


def test_linux_ucred_of_unconnected_socket_fails_closed() -> None:
    # What Linux returns for a socket with no peer: pid 0, uid and gid (uid_t)-1.
    with pytest.raises(PeerCredentialsUnavailable):
        parse_linux_ucred(struct.pack("=iII", 0, 0xFFFFFFFF, 0xFFFFFFFF))


PIDS = st.integers(-(2**31), 2**31 - 1)
IDS = st.integers(0, 0xFFFF_FFFE)  # every uid_t but (uid_t)-1, the kernel's "none"


@given(pid=PIDS, uid=IDS, gid=IDS)
def test_linux_ucred_reads_what_struct_reads(pid: int, uid: int, gid: int) -> None:
    """The fields are read without `struct` (the client's import cost); `struct` is the
    reference for the layout."""
    creds = parse_linux_ucred(struct.pack("=iII", pid, uid, gid))
    assert creds == PeerCredentials(pid=max(pid, 0), uid=uid, gid=gid)


@given(
    pid=PIDS,
    uid=IDS,
    groups=st.lists(IDS, min_size=1, max_size=16),
    ngroups=st.integers(1, 2**15 - 1),
)
def test_xucred_reads_what_struct_reads(
    pid: int, uid: int, groups: list[int], ngroups: int
) -> None:
    raw = _xucred(uid, groups, ngroups=ngroups)
    creds = parse_xucred(raw, struct.pack("=i", pid))
    assert creds == PeerCredentials(pid=max(pid, 0), uid=uid, gid=groups[0])


def test_xucred_is_76_bytes_like_the_darwin_struct() -> None:
    assert len(_xucred(501, [20])) == 76


def test_xucred_takes_uid_and_first_group_and_the_peerpid() -> None:
    raw = _xucred(501, [20, 12, 61, 79])
    creds = parse_xucred(raw, struct.pack("=i", 777))
    assert creds == PeerCredentials(pid=777, uid=501, gid=20)


def test_xucred_without_peerpid_has_getpeereid_semantics() -> None:
    assert parse_xucred(_xucred(501, [20]), b"") == PeerCredentials(pid=0, uid=501, gid=20)


@pytest.mark.parametrize(
    ("raw", "pid_raw"),
    [
        (b"", b""),
        (_xucred(501, [20])[:-1], b""),
        (_xucred(501, [20], version=1), b""),
        (_xucred(501, [], ngroups=0), b""),
        (_xucred(501, [20]), b"\x01\x00"),
    ],
    ids=["empty", "short", "unknown-version", "no-groups", "short-pid"],
)
def test_xucred_that_cannot_be_trusted_fails_closed(raw: bytes, pid_raw: bytes) -> None:
    with pytest.raises(PeerCredentialsUnavailable):
        parse_xucred(raw, pid_raw)


@pytest.mark.skipif(sys.platform != "linux", reason="SO_PEERCRED is Linux")
def test_socketpair_reports_this_process() -> None:
    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with left, right:
        creds = read_peer_credentials(left)
    assert creds == PeerCredentials(pid=os.getpid(), uid=os.getuid(), gid=os.getgid())


@pytest.mark.skipif(sys.platform != "linux", reason="SO_PEERCRED is Linux")
def test_unconnected_socket_fails_closed() -> None:
    with (
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock,
        pytest.raises(PeerCredentialsUnavailable),
    ):
        read_peer_credentials(sock)


def test_closed_socket_fails_closed() -> None:
    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    right.close()
    left.close()
    with pytest.raises(PeerCredentialsUnavailable):
        read_peer_credentials(left)
