"""A whole alp world for end-to-end tests: a real alpd whose runs reach the scripted model server.

``AlpWorld`` is what ``/work/scratch/flagship_manual.py`` set up by hand, as a fixture:

- a home for the runtimes (``HOME``, ``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``) outside ``/tmp``
  (Codex warns and skips its helper aliases under a temp dir), with a ``.profile`` that puts
  the virtualenv's ``bin`` on ``PATH``: Codex's shell tool runs ``bash -lc``, and the model's
  ``alp context pin …`` must find our ``alp``;
- the Claude and Codex environments (``runtimes.claude_env`` + ``runtimes.codex_env``) merged
  into alpd's environment, because a headless run inherits alpd's environment;
- ``config.toml`` in alpd's home declaring the ``coder`` agent on Codex with
  ``permissionMode = "workspace-write-network"`` (Codex's sandbox refuses socket connects,
  alp's Unix socket included, without network access), plus whatever a test adds; the
  recap is off unless the test has a ``[recap]`` table of its own;
- helpers that drive alp the way a user does (``alp …`` through ``python -m alpctl``) or the
  wire directly, and a pseudo-terminal driver for the interactive roots.

Import the fixtures from a test module: ``from fixtures_alp import alp_world, make_world``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import pytest
import runtimes
from model_server import ModelServer

from alpd.testing.daemon import DaemonProcess, running_daemon

VENV_BIN = Path(sys.executable).parent

#: The agent the flagship continues in: Codex, sandboxed, but allowed to reach alp's socket.
CODER_AGENT = """\
[agents.coder]
runtime = "codex"
permissionMode = "workspace-write-network"
"""

#: The recap is off unless a test configures it: its refreshes are model calls of their own.
RECAP_OFF = """
[recap]
enabled = false
"""


#: Set by ``running_daemon`` or by alpd itself; an inherited value must not override them.
_DAEMON_OWNED = (
    "ALP_HOME",
    "ALP_SOCKET",
    "ALP_NO_AUTOSTART",
    "ALP_THREAD_ID",
    "ALP_EXECUTION_ID",
    "ALP_SESSION_CONTEXT",
)


def _without_alp_labels(env: Mapping[str, str]) -> dict[str, str]:
    """Drop the daemon's own variables from an inherited environment."""
    return {k: v for k, v in env.items() if k not in _DAEMON_OWNED}


def wait_until(check: Callable[[], Any], timeout: float, what: str, interval: float = 0.05) -> Any:
    """Poll ``check`` until it returns something truthy; fail the test with ``what`` if not."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


@dataclass
class AlpWorld:
    """One alpd, its runtimes' home, a workspace, and the model server they talk to."""

    base: Path
    home: Path
    work: Path
    codex_home: Path
    server: ModelServer
    daemon: DaemonProcess

    @property
    def env(self) -> dict[str, str]:
        """The environment of alpd, and of a user's shell talking to it."""
        return dict(self.daemon.env)

    # -- the command line, as a user types it --------------------------------------------------

    def cli(
        self, *args: str, cwd: Path | None = None, timeout: float = 60.0
    ) -> subprocess.CompletedProcess[str]:
        return self.daemon.cli(*args, cwd=str(cwd or self.work), timeout=timeout)

    def cli_json(self, *args: str, cwd: Path | None = None, expect_rc: int = 0) -> Any:
        """``alp ARGS --json`` (the flag goes before any ``--``); its parsed stdout."""
        argv = list(args)
        cut = argv.index("--") if "--" in argv else len(argv)
        argv.insert(cut, "--json")
        result = self.cli(*argv, cwd=cwd)
        assert result.returncode == expect_rc, (
            f"alp {' '.join(argv)} → rc {result.returncode}, wanted {expect_rc}\n"
            f"stdout: {result.stdout}\nstderr: {result.stderr}\nalpd log:\n{self.log_tail()}"
        )
        return json.loads(result.stdout)

    # -- the wire ------------------------------------------------------------------------------

    def call(self, method: str, **params: Any) -> Any:
        return self.daemon.call(method, params)

    def show(self, execution_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self.call("execution/show", executionId=execution_id)
        return result

    def context(self, thread_id: str, revision: int | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"threadId": thread_id}
        if revision is not None:
            params["revision"] = revision
        result: dict[str, Any] = self.call("thread/context", **params)
        return result

    def wait_settled(self, execution_id: str, timeout: float = 40.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            execution: dict[str, Any] = self.call(
                "execution/wait", executionId=execution_id, timeout=1.0
            )
            if execution["status"] == "settled":
                return execution
            if time.monotonic() > deadline:
                pytest.fail(
                    f"{execution_id} not settled after {timeout} s: {execution}\n"
                    f"output: {self.run_output(execution_id)}\nalpd log:\n{self.log_tail()}"
                )

    # -- starting roots ------------------------------------------------------------------------

    def start_headless(
        self, prompt: str | None, *, runtime: str = "claude", args: Sequence[str] = ()
    ) -> tuple[str, str]:
        """``alp --runtime R --headless --prompt P [-- ARGS]``: (thread id, execution id)."""
        argv = ["--title", "e2e", "--runtime", runtime, "--headless"]
        if prompt is not None:
            argv += ["--prompt", prompt]
        if args:
            argv += ["--", *args]
        result = self.cli_json(*argv)
        return result["thread"]["id"], result["execution"]["id"]

    def continue_headless(
        self, thread_id: str, prompt: str, *, agent: str | None = None, runtime: str | None = None
    ) -> str:
        """``alp thread continue ID --headless --prompt P``: the new root's execution id."""
        argv = ["thread", "continue", thread_id, "--headless", "--prompt", prompt]
        if agent is not None:
            argv += ["--agent", agent]
        if runtime is not None:
            argv += ["--runtime", runtime]
        execution_id: str = self.cli_json(*argv)["execution"]["id"]
        return execution_id

    # -- diagnostics ---------------------------------------------------------------------------

    def exec_dir(self, execution_id: str) -> Path:
        return self.daemon.home / "executions" / execution_id

    def run_output(self, execution_id: str) -> str:
        parts = []
        for name in ("stdout.log", "stderr.log"):
            path = self.exec_dir(execution_id) / name
            if path.exists():
                parts.append(f"--- {name}\n{path.read_text(errors='replace')[-3000:]}")
        return "\n".join(parts)

    def log_tail(self, size: int = 4000) -> str:
        return self.daemon.log_text()[-size:]


def processes_labelled(execution_id: str) -> list[psutil.Process]:
    """Live (non-zombie) processes carrying ``ALP_EXECUTION_ID=execution_id``."""
    found = []
    for process in psutil.process_iter():
        try:
            if process.status() == psutil.STATUS_ZOMBIE:
                continue
            if process.environ().get("ALP_EXECUTION_ID") == execution_id:
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


WorldFactory = Callable[..., AlpWorld]


@pytest.fixture
def make_world(
    request: pytest.FixtureRequest, model_server: ModelServer, outside_tmp: Path
) -> Iterator[WorldFactory]:
    """Build an :class:`AlpWorld` (one per test).

    ``config``: extra config.toml text after the ``coder`` agent. ``with_runtimes``: put the
    pinned ``claude``/``codex`` on alpd's PATH (needs them installed: skip, or fail under CI).
    ``path``: alpd's PATH instead of the default.
    """
    stack = contextlib.ExitStack()

    def build(config: str = "", *, with_runtimes: bool = True, path: str | None = None) -> AlpWorld:
        base = outside_tmp
        home, work, codex_home = base / "h", base / "work", base / "h" / "codex-home"
        for folder in (home, work):
            folder.mkdir(exist_ok=True)
        (home / ".profile").write_text(f'export PATH="{VENV_BIN}:$PATH"\n')
        runtimes.write_codex_home(codex_home, model_server.openai_base_url, trusted_dirs=[work])
        env = runtimes.claude_env(model_server.anthropic_base_url, home)
        env.update(runtimes.codex_env(codex_home, home))
        bins = [str(VENV_BIN)]
        if with_runtimes:
            claude: Path = request.getfixturevalue("claude_bin")
            codex: Path = request.getfixturevalue("codex_bin")
            bins += [str(claude.parent), str(codex.parent)]
        env["PATH"] = path if path is not None else ":".join([*bins, os.environ["PATH"]])
        alp_home = base / "home"
        alp_home.mkdir(mode=0o700, exist_ok=True)
        if "[recap]" not in config:
            # a refresh would take the scripted replies meant for the test's own runs
            config += RECAP_OFF
        (alp_home / "config.toml").write_text(CODER_AGENT + config)
        daemon = stack.enter_context(running_daemon(base, extra_env=_without_alp_labels(env)))
        return AlpWorld(base, home, work, codex_home, model_server, daemon)

    with stack:
        yield build


@pytest.fixture
def alp_world(make_world: WorldFactory) -> AlpWorld:
    """The default world: the real CLIs on PATH, the ``coder`` agent on Codex."""
    return make_world()


# -- pseudo-terminals ----------------------------------------------------------------------------


@dataclass
class PtySession:
    """A program on the slave side of a pseudo-terminal; its output collected in the background."""

    pid: int
    fd: int
    output: bytearray = field(default_factory=bytearray)
    status: int | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _reader: threading.Thread | None = None

    def start_reading(self) -> None:
        def drain() -> None:
            while True:
                try:
                    ready, _, _ = select.select([self.fd], [], [], 0.1)
                    if not ready:
                        if self.status is not None:
                            return
                        continue
                    chunk = os.read(self.fd, 65536)
                except OSError:
                    return  # EIO: the slave side is closed
                if not chunk:
                    return
                with self._lock:
                    self.output.extend(chunk)

        self._reader = threading.Thread(target=drain, daemon=True)
        self._reader.start()

    def text(self) -> str:
        with self._lock:
            return self.output.decode("utf-8", errors="replace")

    def send(self, data: str | bytes) -> None:
        os.write(self.fd, data.encode() if isinstance(data, str) else data)

    def poll(self) -> int | None:
        if self.status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid == self.pid:
                self.status = os.waitstatus_to_exitcode(status)
        return self.status

    def wait(self, timeout: float) -> int:
        wait_until(lambda: self.poll() is not None, timeout, f"the pty child {self.pid} to exit")
        assert self.status is not None
        return self.status

    def close(self) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)
        if self._reader is not None:
            self._reader.join(timeout=2)
        with contextlib.suppress(OSError):
            os.close(self.fd)


def spawn_in_pty(
    argv: Sequence[str], env: Mapping[str, str], cwd: Path, rows: int = 40, cols: int = 120
) -> PtySession:
    """Fork ``argv`` onto a new pseudo-terminal (it becomes the session leader on it)."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: never return into pytest
        try:
            os.chdir(cwd)
            os.execvpe(argv[0], list(argv), dict(env))
        finally:
            os._exit(127)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    session = PtySession(pid, fd)
    session.start_reading()
    return session


@pytest.fixture
def pty_sessions() -> Iterator[Callable[..., PtySession]]:
    """``spawn(argv, env, cwd)`` for pseudo-terminal sessions killed at the end of the test."""
    sessions: list[PtySession] = []

    def spawn(argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> PtySession:
        session = spawn_in_pty(argv, env, cwd)
        sessions.append(session)
        return session

    yield spawn
    for session in sessions:
        session.close()
