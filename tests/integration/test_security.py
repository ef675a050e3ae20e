"""Who may talk to whom (docs/contract.md, invariant 10): peer uid checks both ways, modes.

Reaching the daemon as another uid honestly: the socket directory is 0700 root and the socket
0600, so a process whose *effective* uid is `nobody` cannot even resolve the path. Linux keeps
a separate filesystem uid for path permission checks, while SO_PEERCRED reports the effective
uid at connect(). A forked child therefore drops its real and effective uid to 65534, keeps 0
as saved uid, sets only its fsuid back to 0 (`setfsuid(2)`), and connects: the kernel hands
the daemon a peer whose uid is 65534, exactly what a foreign caller that can reach the socket
(a wrongly shared directory, a passed fd) looks like. Nothing in the daemon is weakened.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from wire import RawConnection

from alpctl.client import Client, ForeignDaemon
from alpd.testing.daemon import DaemonProcess, daemon_env, running_daemon
from protocol import errors

NOBODY = 65534
#: skipped without root, except under CI=true, where that skip fails (tests/ci_gate.py)
ROOT_ONLY = pytest.mark.needs_root
SKIP_UNLESS_ROOT = pytest.mark.skipif(
    os.geteuid() != 0,
    reason="needs root: only root can act as a second uid (setresuid/chown) on this machine",
)
CREATE = b'{"jsonrpc":"2.0","id":1,"method":"thread/create","params":{"title":"foreign"}}\n'


def in_child(work: Callable[[], bytes], timeout: float = 15.0) -> bytes:
    """Run `work` in a forked child and return what it returned (or its exception's repr)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read_end)
        try:
            out = work()
        except BaseException as exc:
            out = f"EXC {exc!r}".encode()
        os.write(write_end, out)
        os._exit(0)
    os.close(write_end)
    deadline = time.monotonic() + timeout
    while os.waitpid(pid, os.WNOHANG) == (0, 0):
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise AssertionError("child did not finish")
        time.sleep(0.01)
    with os.fdopen(read_end, "rb") as pipe:
        return pipe.read()


def become_nobody_reaching_root_paths() -> None:
    """Effective uid nobody (what SO_PEERCRED reports), fsuid root (what path lookup uses)."""
    libc = ctypes.CDLL(None, use_errno=True)
    os.setgroups([])
    os.setresgid(NOBODY, NOBODY, 0)
    os.setresuid(NOBODY, NOBODY, 0)
    libc.setfsuid(0)
    libc.setfsgid(0)
    assert os.geteuid() == NOBODY


def read_all(sock: socket.socket) -> bytes:
    data = b""
    sock.settimeout(10)
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except ConnectionResetError:
        data += b"<reset>"
    return data


def foreign_call(socket_path: Path, payload: bytes) -> bytes:
    def work() -> bytes:
        become_nobody_reaching_root_paths()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(str(socket_path))
            if payload:
                # The refusal may close the connection before the request goes out (EPIPE);
                # it is still there to be read.
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    sock.sendall(payload)
            return read_all(sock)

    return in_child(work)


@ROOT_ONLY
@SKIP_UNLESS_ROOT
def test_foreign_uid_is_refused_before_any_dispatch(alpd: DaemonProcess) -> None:
    out = foreign_call(alpd.socket_path, CREATE)
    assert b'"result"' not in out, out
    assert alpd.call("thread/list", {"all": True}) == {"threads": []}
    refusals = [json.loads(line) for line in alpd.log_text().splitlines() if "peer_refused" in line]
    assert [r["peer_uid"] for r in refusals] == [NOBODY]
    assert_pong_from_owner(alpd)


@ROOT_ONLY
@SKIP_UNLESS_ROOT
def test_foreign_uid_that_sends_nothing_reads_permission_denied(alpd: DaemonProcess) -> None:
    out = foreign_call(alpd.socket_path, b"")
    reply = json.loads(out)
    assert reply["id"] is None
    assert reply["error"]["code"] == errors.code_of("PERMISSION_DENIED")
    assert reply["error"]["data"]["name"] == "PERMISSION_DENIED"


@ROOT_ONLY
@SKIP_UNLESS_ROOT
def test_foreign_uid_that_sent_a_request_is_still_told_permission_denied(
    alpd: DaemonProcess,
) -> None:
    """A real client writes its request right after connect(); the refusal must reach it.

    The daemon closes with the request unread, so Linux may reset the connection after the
    refusal (ECONNRESET); what matters is that the refusal comes first.
    """
    out = foreign_call(alpd.socket_path, CREATE)
    reply = json.loads(out.splitlines()[0])
    assert reply["error"]["data"]["name"] == "PERMISSION_DENIED"


def assert_pong_from_owner(daemon: DaemonProcess) -> None:
    result = daemon.call("daemon/ping")
    assert isinstance(result, dict) and result["pid"] == daemon.pid


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A private directory with a path short enough for a Unix socket (~108 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="alp-sec-", dir="/tmp"))
    try:
        yield path
    finally:
        subprocess.run(["rm", "-rf", str(path)], check=False)


def serve_as_nobody(socket_path: Path, ready: int) -> None:
    """A fake daemon: the socket is bound by root, then listened on as uid nobody."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(socket_path))
    os.chmod(socket_path, 0o666)
    os.setgroups([])
    os.setresgid(NOBODY, NOBODY, NOBODY)
    os.setresuid(NOBODY, NOBODY, NOBODY)
    sock.listen(8)  # Linux records the listener's credentials here
    os.write(ready, b"r")
    received = b""
    sock.settimeout(5)
    try:
        while True:
            conn, _ = sock.accept()
            conn.settimeout(0.5)
            with contextlib.suppress(TimeoutError):
                received += conn.recv(65536)
            os.write(ready, b"+" + received.replace(b"\n", b" ") + b"\n")
            conn.close()
    except TimeoutError:
        pass


@ROOT_ONLY
@SKIP_UNLESS_ROOT
def test_client_refuses_a_socket_served_by_another_uid(short_dir: Path) -> None:
    socket_path = short_dir / "alpd.sock"
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read_end)
        try:
            serve_as_nobody(socket_path, write_end)
        finally:
            os._exit(0)
    os.close(write_end)
    try:
        with os.fdopen(read_end, "rb", buffering=0) as events:
            assert events.read(1) == b"r"
            with pytest.raises(ForeignDaemon, match=f"uid {NOBODY}"):
                Client.connect(socket_path)
            assert events.readline() == b"+\n"  # accepted, and not one byte was sent to it
            env = daemon_env(short_dir / "home", socket_path)
            cli = subprocess.run(
                [sys.executable, "-m", "alpctl", "thread", "list"],
                env=env,
                capture_output=True,
                text=True,
                timeout=30,
            )
            assert cli.returncode == 3, cli
            assert f"uid {NOBODY}" in cli.stderr
            assert str(socket_path) in cli.stderr
            assert events.readline() == b"+\n"
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def mode_of(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_socket_home_and_database_are_private(alpd: DaemonProcess) -> None:
    alpd.call("thread/create", {"title": "make the db write"})
    assert mode_of(alpd.socket_path.parent) == 0o700
    assert stat.S_ISSOCK(os.lstat(alpd.socket_path).st_mode)
    assert mode_of(alpd.socket_path) == 0o600
    assert mode_of(alpd.home) == 0o700
    assert mode_of(alpd.home / "alp.db") == 0o600
    for path in alpd.home.rglob("*"):
        expected = 0o700 if path.is_dir() else 0o600
        assert mode_of(path) == expected, (path, oct(mode_of(path)))
        assert os.lstat(path).st_uid == os.getuid()


def run_alpd(
    home: Path, socket_path: Path, timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    """alpd in the foreground, expected to refuse to start (so it exits by itself)."""
    return subprocess.run(
        [sys.executable, "-m", "alpd", "--home", str(home), "--socket", str(socket_path)],
        env=daemon_env(home, socket_path),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_alpd_refuses_a_socket_dir_with_a_wide_mode(short_dir: Path) -> None:
    sock_dir = short_dir / "run"
    sock_dir.mkdir()
    sock_dir.chmod(0o755)
    done = run_alpd(short_dir / "home", sock_dir / "alpd.sock")
    assert done.returncode != 0
    assert "0755" in done.stderr and str(sock_dir) in done.stderr
    assert "Traceback" not in done.stderr
    assert not (sock_dir / "alpd.sock").exists()
    assert mode_of(sock_dir) == 0o755  # refused, not "repaired"


@ROOT_ONLY
@SKIP_UNLESS_ROOT
def test_alpd_refuses_a_socket_dir_owned_by_another_uid(short_dir: Path) -> None:
    sock_dir = short_dir / "run"
    sock_dir.mkdir(mode=0o700)
    os.chown(sock_dir, NOBODY, NOBODY)
    done = run_alpd(short_dir / "home", sock_dir / "alpd.sock")
    assert done.returncode != 0
    assert f"uid {NOBODY}" in done.stderr
    assert not (sock_dir / "alpd.sock").exists()


def test_second_alpd_on_the_same_home_exits_naming_the_holder(
    alpd: DaemonProcess, short_dir: Path
) -> None:
    done = run_alpd(alpd.home, short_dir / "alpd.sock")
    assert done.returncode != 0
    assert f"pid {alpd.pid}" in done.stderr, done.stderr
    assert not (short_dir / "alpd.sock").exists()
    assert_pong_from_owner(alpd)


def test_stale_socket_file_is_replaced(tmp_path: Path) -> None:
    with running_daemon(tmp_path) as daemon:
        daemon.kill9()  # leaves the socket file behind with nobody listening
        assert stat.S_ISSOCK(os.lstat(daemon.socket_path).st_mode)
        daemon.start()
        assert_pong_from_owner(daemon)


def test_live_socket_is_not_taken_over(alpd: DaemonProcess, short_dir: Path) -> None:
    done = run_alpd(short_dir / "other-home", alpd.socket_path)
    assert done.returncode != 0
    assert "already answers" in done.stderr, done.stderr
    assert_pong_from_owner(alpd)
    with RawConnection(alpd.socket_path) as conn:
        assert conn.request("daemon/ping")["result"]["pid"] == alpd.pid


def test_a_file_that_is_not_a_socket_is_never_removed(short_dir: Path) -> None:
    sock_dir = short_dir / "run"
    sock_dir.mkdir(mode=0o700)
    squatter = sock_dir / "alpd.sock"
    squatter.write_text("precious")
    done = run_alpd(short_dir / "home", squatter)
    assert done.returncode != 0
    assert squatter.read_text() == "precious"


#: a uid no test or person here uses: the victim whose /tmp/alp-UID another user took first
VICTIM = 54321


@ROOT_ONLY
@SKIP_UNLESS_ROOT
def test_a_socket_dir_another_user_planted_in_tmp_is_refused_for_a_private_fallback() -> None:
    """Another user pre-creates `/tmp/alp-<victim uid>`: alpd refuses it, says what to do, and
    serves on `$ALP_HOME/run/alpd.sock` instead; `alp` finds the same fallback."""
    planted = Path(f"/tmp/alp-{VICTIM}")
    if os.path.lexists(planted):
        pytest.fail(f"{planted} exists already; remove it (it is this test's)")
    base = Path(tempfile.mkdtemp(prefix="alp-victim-", dir="/tmp"))
    base.chmod(0o755)
    home = base / "h"
    home.mkdir(mode=0o700)
    os.chown(home, VICTIM, VICTIM)
    planted.mkdir(mode=0o755)  # root's: another user, from the victim's side
    as_victim = ["setpriv", f"--reuid={VICTIM}", f"--regid={VICTIM}", "--clear-groups"]
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "ALP_HOME": str(home),
        "ALP_NO_AUTOSTART": "1",
    }
    bin_dir = Path(sys.executable).parent
    log = (base / "alpd.log").open("wb")
    daemon = subprocess.Popen(
        [*as_victim, sys.executable, "-m", "alpd"], env=env, stdout=log, stderr=log, cwd=base
    )
    try:
        fallback = home / "run" / "alpd.sock"
        deadline = time.monotonic() + 20
        while not fallback.exists():
            assert daemon.poll() is None, (base / "alpd.log").read_text()
            assert time.monotonic() < deadline, (base / "alpd.log").read_text()
            time.sleep(0.05)
        pinged = subprocess.run(
            [*as_victim, str(bin_dir / "alp"), "daemon", "ping", "--json"],
            env=env, capture_output=True, text=True, timeout=30, cwd=base,
        )  # fmt: skip
        assert pinged.returncode == 0, pinged.stderr
        assert json.loads(pinged.stdout)["pid"] == daemon.pid
        text = (base / "alpd.log").read_text()
        assert str(planted) in text and "remove" in text, text
        assert not list(planted.iterdir())  # nothing of the victim's went into it
    finally:
        daemon.terminate()
        daemon.wait(timeout=20)
        log.close()
        planted.rmdir()
        subprocess.run(["rm", "-rf", str(base)], check=False)
