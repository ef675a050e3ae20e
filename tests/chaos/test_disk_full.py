"""A full disk under the state home: writes say STORAGE_FULL, reads go on, writes resume
when space returns, and a restart on the full disk serves the intact database.

The home lives on a small tmpfs mounted for the test (root only; CI runs as root, and under
CI=true a skip is a failure). A filler file takes every free byte; deleting it gives the
space back.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from full_disk import fill, small_filesystem
from polling import wait_for

from alpctl.client import Client, RpcError
from alpd.testing.daemon import DaemonProcess, running_daemon

pytestmark = pytest.mark.chaos


def create(client: Client, title: str) -> str:
    """ "created", or the name of the error the daemon answered."""
    try:
        client.call("thread/create", {"title": title, "cwd": "/tmp"})
    except RpcError as exc:
        return exc.name
    return "created"


def titles(client: Client) -> list[str]:
    result: Any = client.call("thread/list", {"all": True})
    return sorted(t["title"] for t in result["threads"])


def test_disk_full_says_storage_full_reads_go_on_and_writes_resume(tmp_path: Path) -> None:
    with small_filesystem() as disk, running_daemon(disk) as daemon, daemon.client() as conn:
        for i in range(20):
            assert create(conn, f"before {i:02}") == "created"
        before = titles(conn)
        filler = fill(disk)
        for i in range(5):
            refused = create(conn, f"refused {i} " + "x" * 1000)
            assert refused == "STORAGE_FULL", daemon.log_text()[-3000:]
        assert titles(conn) == before
        filler.unlink()
        assert create(conn, "after") == "created", daemon.log_text()[-3000:]
        assert titles(conn) == sorted([*before, "after"])


def test_a_restart_on_a_full_disk_says_so_and_starts_once_space_returns(tmp_path: Path) -> None:
    """A clean stop removes the WAL and shared-memory files, and opening a WAL database
    writes the latter: alpd cannot start on a disk with no free block. It must say that,
    not call the intact database damaged."""
    with small_filesystem() as disk, running_daemon(disk) as daemon:
        before = make_threads(daemon)
        assert daemon.stop() == 0
        filler = fill(disk)
        with pytest.raises(RuntimeError) as refused:
            daemon.start()
        message = str(refused.value)
        assert "no space left" in message and "not damaged" in message, message
        assert "move it aside" not in message and "Traceback" not in message, message
        filler.unlink()
        daemon.start()
        with daemon.client() as conn:
            assert titles(conn) == before
            assert create(conn, "after") == "created"


def test_a_restart_after_kill9_on_a_full_disk_serves_reads_and_refuses_writes(
    tmp_path: Path,
) -> None:
    """After kill -9 the shared-memory file is still there: alpd starts on the full disk,
    reads go on and writes say STORAGE_FULL."""
    with small_filesystem() as disk, running_daemon(disk) as daemon:
        before = make_threads(daemon)
        daemon.kill9()
        filler = fill(disk)
        daemon.start()
        with daemon.client() as conn:
            assert titles(conn) == before
            assert create(conn, "refused " + "x" * 1000) == "STORAGE_FULL"
            filler.unlink()
            assert create(conn, "after") == "created"


def make_threads(daemon: DaemonProcess) -> list[str]:
    with daemon.client() as conn:
        for i in range(20):
            assert create(conn, f"kept {i:02}") == "created"
        return titles(conn)


def oversized_frame(socket_path: Path) -> None:
    """One frame above the size limit: alpd refuses it and logs `frame_too_large`."""
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(str(socket_path))
        with contextlib.suppress(OSError):
            sock.sendall(b'{"jsonrpc":"2.0","id":1,"method":"daemon/ping","x":"' + b"a" * 1_100_000)
            sock.sendall(b'"}\n')
            sock.recv(4096)


def test_a_full_disk_under_the_autostart_log_never_ends_the_daemon(tmp_path: Path) -> None:
    """`alp` autostarts alpd with its output in `$ALP_HOME/alpd.log`; with that disk full,
    every log line fails with ENOSPC. alpd goes on serving, and once space returns the log
    resumes with a count of the lines it could not write."""
    from alpctl.client import start_daemon

    sock_dir = Path(tempfile.mkdtemp(prefix="alp-logfull-", dir="/tmp"))
    socket_path = sock_dir / "alpd.sock"
    with small_filesystem() as disk:
        home = disk / "home"
        pid = start_daemon(str(home), str(socket_path))
        try:
            log = home / "alpd.log"
            with Client.connect(str(socket_path)) as conn:
                assert create(conn, "before") == "created"
            filler = fill(disk)
            # more lines than the free end of the log's last page holds
            for _ in range(60):
                oversized_frame(socket_path)
                with Client.connect(str(socket_path)) as conn:
                    assert conn.call("daemon/ping")["pid"] == pid, log.read_text()[-2000:]
            filler.unlink()
            oversized_frame(socket_path)
            with Client.connect(str(socket_path)) as conn:
                assert conn.call("daemon/ping")["pid"] == pid
                assert create(conn, "after") == "created"
            text = log.read_text()
            assert '"log_lines_lost"' in text, text[-2000:]
            assert text.rstrip().endswith("}"), text[-500:]
            # and the log goes on after its note: a frame refused now is logged after it
            # (not "the last line": alpd's own tasks log too, the meaning index's first
            # look for a model among them, at a moment of their own)
            note = max(i for i, line in enumerate(text.splitlines()) if "log_lines_lost" in line)
            oversized_frame(socket_path)
            wait_for(
                lambda: any(
                    "frame_too_large" in line for line in log.read_text().splitlines()[note + 1 :]
                ),
                timeout=10,
                what="a refused frame logged after the note",
            )
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 15)
            for _ in range(200):
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                import time

                time.sleep(0.05)
            if socket_path.exists():
                socket_path.unlink()
            sock_dir.rmdir()
