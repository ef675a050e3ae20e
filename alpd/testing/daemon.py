"""A real alpd on a temporary home and socket, for tests of alp and of tools built on it.

    with running_daemon(tmp_path) as d:
        with d.client() as c:
            c.call("daemon/ping")

The daemon is a separate process (`python -m alpd`), so tests exercise the real socket,
the real SQLite file and the real signal handling; `kill9()` and `restart()` serve crash tests.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from alpctl.client import Client, DaemonUnreachable


@dataclass
class DaemonProcess:
    home: Path
    socket_path: Path
    env: dict[str, str]
    log_path: Path
    process: subprocess.Popen[bytes] | None = None
    extra_args: list[str] = field(default_factory=list)
    #: the interpreter that runs `-m alpd` (another environment's, to run an installed alp)
    python: str = sys.executable

    def start(self, timeout: float = 15.0) -> None:
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [
                self.python,
                # -P: `-m` would put the current directory first on sys.path, so run from a
                # checkout, another environment's interpreter would import the checkout's alpd
                # rather than its own (the benchmarks' installed alp).
                "-P",
                "-m",
                "alpd",
                "--home",
                str(self.home),
                "--socket",
                str(self.socket_path),
                *self.extra_args,
            ],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"alpd exited {self.process.returncode}:\n{self.log_text()}")
            try:
                Client.connect(self.socket_path).close()
                return
            except DaemonUnreachable:
                time.sleep(0.02)
        raise RuntimeError(f"alpd did not answer within {timeout} s:\n{self.log_text()}")

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def client(self) -> Client:
        return Client.connect(self.socket_path)

    def call(self, method: str, params: dict[str, object] | None = None) -> object:
        with self.client() as client:
            return client.call(method, params)

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def stop(self, timeout: float = 15.0) -> int:
        """SIGTERM and wait; returns the exit status."""
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout)

    def kill9(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def restart(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.stop()
        self.start()

    def cli(
        self,
        *args: str,
        input: str | None = None,
        cwd: str | None = None,
        extra_env: Mapping[str, str] | None = None,
        timeout: float = 60.0,
    ) -> subprocess.CompletedProcess[str]:
        """Run `alp ARGS…` against this daemon, as a user would (no autostart)."""
        env = {**self.env, **(extra_env or {})}
        return subprocess.run(
            [sys.executable, "-m", "alpctl", *args],
            env=env,
            input=input,
            capture_output=True,
            text=True,
            cwd=cwd,
            timeout=timeout,
        )


#: Nothing listens on the discard port of the loopback address.
UNREACHABLE_API = "http://127.0.0.1:9"


def daemon_env(
    home: Path, socket_path: Path, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ALP_", "NOTIFY_", "LISTEN_"))}
    env.update({"ALP_HOME": str(home), "ALP_SOCKET": str(socket_path), "ALP_NO_AUTOSTART": "1"})
    # A runtime the daemon starts on its own (a recap's `claude -p`) must never reach a model
    # API off this machine: unless the caller points them elsewhere, the model APIs are a
    # closed loopback port.
    env.update({"ANTHROPIC_BASE_URL": UNREACHABLE_API, "OPENAI_BASE_URL": UNREACHABLE_API + "/v1"})
    # What alpd shares between every alpd of the user (a chat channel's one-poller-per-token
    # lock) is shared between the daemons of this test session only: another session's
    # (a second checkout's tests, the person's own alpd) would otherwise hold the same lock.
    env["XDG_RUNTIME_DIR"] = str(_session_runtime_dir())
    env.update(extra or {})
    return env


def _session_runtime_dir() -> Path:
    runtime = Path(f"/tmp/alp-test-run-{os.getpid()}")
    runtime.mkdir(mode=0o700, exist_ok=True)
    return runtime


@contextmanager
def running_daemon(
    base: Path,
    *,
    extra_env: Mapping[str, str] | None = None,
    extra_args: list[str] | None = None,
    python: str = sys.executable,
) -> Iterator[DaemonProcess]:
    """Start alpd with its home in `base/home` and its socket in a short private path."""
    home = base / "home"
    # Unix socket paths are limited to ~108 bytes; pytest's tmp paths can be longer.
    sock_dir = Path(f"/tmp/alp-test-{os.getpid()}-{abs(hash(str(base))) % 10**8}")
    socket_path = sock_dir / "alpd.sock"
    daemon = DaemonProcess(
        home=home,
        socket_path=socket_path,
        env=daemon_env(home, socket_path, extra_env),
        log_path=base / "alpd.log",
        extra_args=list(extra_args or []),
        python=python,
    )
    daemon.start()
    try:
        yield daemon
    finally:
        if daemon.process is not None and daemon.process.poll() is None:
            try:
                daemon.stop()
            except subprocess.TimeoutExpired:
                daemon.kill9()
        if socket_path.exists():
            socket_path.unlink()
        if sock_dir.exists():
            sock_dir.rmdir()
