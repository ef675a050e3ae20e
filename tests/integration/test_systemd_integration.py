"""alpd under a service manager: sd_notify, the watchdog, socket activation, and the
refusals at start (a database from a newer alpd, a damaged one)."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from alpctl.client import Client, DaemonUnreachable
from alpd.testing.daemon import daemon_env, running_daemon


def _wait_answering(path: Path, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            Client.connect(path).close()
            return
        except DaemonUnreachable:
            time.sleep(0.02)
    raise AssertionError(f"nothing answered on {path}")


def _datagrams(sock: socket.socket, until: str, timeout: float = 15.0) -> list[str]:
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            seen.append(sock.recv(4096).decode())
        except TimeoutError:
            break
        if until in seen[-1]:
            return seen
    raise AssertionError(f"no {until!r} among {seen}")


def test_sd_notify_ready_watchdog_stopping_and_children_never_see_them(tmp_path: Path) -> None:
    notify_path = tmp_path / "notify.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(str(notify_path))
    work = tmp_path / "work"
    work.mkdir()
    extra = {"NOTIFY_SOCKET": str(notify_path), "WATCHDOG_USEC": "200000"}
    with running_daemon(tmp_path, extra_env=extra) as d:
        assert any("READY=1" in m for m in _datagrams(listener, "READY=1"))
        # Half of WatchdogSec, and only once the loop and the database writer answered.
        pings = [m for m in _datagrams(listener, "WATCHDOG=1") if "WATCHDOG=1" in m]
        assert pings
        thread = d.call("thread/create", {"title": "t", "cwd": str(work)})
        assert isinstance(thread, dict)
        dump = work / "env.json"
        script = (
            f"{sys.executable} -c 'import json,os; print(json.dumps(dict(os.environ)))' > {dump}"
        )
        result = d.cli(
            "thread", "continue", thread["id"], "--runtime", "command", "--headless", "--wait",
            "--", "/bin/sh", "-c", script, cwd=str(work),
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        env = json.loads(dump.read_text())
        for name in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID"):
            assert name not in env
        assert env["ALP_THREAD_ID"] == thread["id"]
        assert d.stop() == 0
        assert any("STOPPING=1" in m for m in _datagrams(listener, "STOPPING=1"))
    listener.close()


def test_socket_activation_serves_on_the_inherited_socket(tmp_path: Path) -> None:
    sock_dir = Path(f"/tmp/alp-act-{os.getpid()}")
    sock_dir.mkdir(mode=0o700)
    path = sock_dir / "alpd.sock"
    home = tmp_path / "home"
    listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listening.bind(str(path))
    listening.listen(16)
    launcher = (
        "import os, sys; os.dup2(int(sys.argv[1]), 3); "
        "os.environ['LISTEN_PID'] = str(os.getpid()); os.environ['LISTEN_FDS'] = '1'; "
        "os.execv(sys.executable, [sys.executable, '-m', 'alpd', '--home', sys.argv[2], "
        "'--socket', '/nonexistent/not-used.sock'])"
    )
    env = daemon_env(home, path)
    process = subprocess.Popen(
        [sys.executable, "-c", launcher, str(listening.fileno()), str(home)],
        pass_fds=(listening.fileno(),), env=env, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        _wait_answering(path)
        with Client.connect(path) as client:
            status = client.call("daemon/status")
            assert status["pid"] == process.pid
            # Runs are told the socket systemd bound, not the --socket default.
            assert status["socket"] == str(path)
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(15) == 0
        listening.close()
        # alpd does not remove a socket it did not bind: the socket unit owns it.
        assert path.exists()
        path.unlink()
        sock_dir.rmdir()


def _start_fails(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    env = daemon_env(home, tmp_path / "s.sock")
    socket_path = f"/tmp/alp-x-{os.getpid()}/s"
    return subprocess.run(
        [sys.executable, "-m", "alpd", "--home", str(home), "--socket", socket_path],
        env=env, capture_output=True, text=True, timeout=30,
    )  # fmt: skip


def test_a_database_from_a_newer_alpd_is_refused(tmp_path: Path) -> None:
    with running_daemon(tmp_path) as d:
        db = d.home / "alp.db"
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA user_version = 999")
    result = _start_fails(tmp_path)
    assert result.returncode == 1
    assert "newer than this alpd knows" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("damage", ["header", "pages"])
def test_a_damaged_database_is_refused_with_a_message(tmp_path: Path, damage: str) -> None:
    with running_daemon(tmp_path) as d:
        for n in range(50):
            d.call("thread/create", {"title": f"t{n}" * 50, "cwd": str(tmp_path)})
        db = d.home / "alp.db"
    data = bytearray(db.read_bytes())
    if damage == "header":
        data[0:16] = b"not a database!!"
    else:
        for offset in range(4096 + 100, len(data), 4096):
            data[offset : offset + 64] = os.urandom(64)
    db.write_bytes(bytes(data))
    result = _start_fails(tmp_path)
    assert result.returncode == 1, result.stderr
    assert "alp.db" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_bad_config_is_refused_at_start_with_file_line_and_reason(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    config = home / "config.toml"
    config.write_text('[agents.lead]\nruntime = "claude"\ndelegatesTo = ["nobody"]\n')
    result = _start_fails(tmp_path)
    assert result.returncode == 1
    assert f"{config}:3:" in result.stderr, result.stderr
    assert "nobody" in result.stderr
    assert "Traceback" not in result.stderr
