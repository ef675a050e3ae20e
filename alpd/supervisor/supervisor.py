"""Headless runs under alpd: spawned in their own session, watched to their end.

A run's stdout and stderr are files in its execution directory, never pipes: a pipe would die
with the daemon and take the run with it (SIGPIPE). Its stdin (its prompt, for runtimes that
read one) is a file with no name: a memfd (memory only) where the system has one, else a
temporary file unlinked before anything is written to it. The whole prompt is in it before
the run starts, so the run reads it whole whatever becomes of alpd, and it is never on disk
under a name: the prompt may hold a secret, and only its filtered text is kept (`prompt`).
The run is wrapped in a tiny
`sh` that writes the exit status to `exit-status` when the program ends, so a daemon that
restarted (and so is no longer the parent, and cannot `wait()`) still learns how it ended.
The same shim holds the program back until alpd has recorded the run's pid (`before_start`),
so a pin from the run's first instruction finds its run.

After a restart, headless runs are *re-adopted*: their identity (pid, start time, boot id)
is checked and they are watched by polling until they end. Interactive runs belong to the
user's terminal; the client settles them, and reconcile settles them `interrupted` if their
process vanished first.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import anyio
import structlog
from anyio.abc import TaskGroup

from alpd.domain.runs.outcomes import EndedAs
from alpd.domain.secrets.filter import REACH, redact, redacted_tail
from alpd.errors import SpawnFailed
from alpd.files import write_private_file
from alpd.runtimes.base import LaunchSpec
from alpd.socket_activation import scrub_systemd_env
from alpd.supervisor.cgroups import RunGroups
from alpd.supervisor.processes import ProcessIdentity, end_run, identify, is_alive

EXIT_STATUS_FILE: Final = "exit-status"
STDOUT_FILE: Final = "stdout.log"
STDERR_FILE: Final = "stderr.log"
#: the run's prompt as alpd keeps it: secret-filtered (what the run read was not)
PROMPT_FILE: Final = "prompt"
OUTPUT_TAIL_BYTES: Final = 2048
ADOPTED_POLL_SECONDS: Final = 0.25

# The status file is written under umask 077 (0600, like everything in the execution
# directory) in a subshell: the run itself keeps the umask it inherited.
_SHIM: Final = (
    'status_file="$1"; shift; "$@"; rc=$?; '
    '(umask 077; printf "%s" "$rc" > "$status_file.tmp") && '
    'mv "$status_file.tmp" "$status_file"; exit $rc'
)

#: Before a run's program starts, the shim waits on a pipe (its fd number is the shim's first
#: argument) until alpd has recorded the run's pid: a run that calls `alp` at once is then
#: recognised from its first instruction. No go (alpd failed to record it, or died): 125.
#: dash takes no fd number above 9 in a redirection, so the pipe is read through /proc; the
#: run inherits that fd, the read end of a pipe whose writer is closed (harmless).
_GATE: Final = 'gate="$1"; shift; read -r go < "/proc/self/fd/$gate" || exit 125; '
GATE_CLOSED_STATUS: Final = 125
#: First of all the shim joins the run's cgroup (its `cgroup.procs` is the first argument,
#: empty where runs get none): everything the program starts is born inside
#: (alpd.supervisor.cgroups). A join that fails leaves the run to the fallback.
_JOIN: Final = 'procs="$1"; shift; [ -z "$procs" ] || { echo $$ > "$procs"; } 2>/dev/null || :; '

log = structlog.get_logger("alpd.supervisor")


@dataclass(frozen=True, slots=True)
class ExitReport:
    exit_code: int | None
    #: alpd ended it: for what (a cancel, a guard rail); None: it ended by itself
    ended_as: EndedAs | None
    output_tail: str


OnExit = Callable[[str, ExitReport], Awaitable[None]]
#: what must be done with a run's identity before its program may start
BeforeStart = Callable[[ProcessIdentity], Awaitable[None]]


def read_exit_status(exec_dir: Path) -> int | None:
    try:
        return int((exec_dir / EXIT_STATUS_FILE).read_text().strip())
    except (OSError, ValueError):
        return None


def output_tail(exec_dir: Path, limit: int = OUTPUT_TAIL_BYTES) -> str:
    """The last `limit` bytes of the run's stderr, else stdout (what explains a failure),
    secret-filtered before the cut: the part of the file that can decide what the tail holds
    (`REACH` characters more, at most 4 bytes each) is read and redacted whole."""
    for name in (STDERR_FILE, STDOUT_FILE):
        path = exec_dir / name
        with contextlib.suppress(OSError):
            size = path.stat().st_size
            if size:
                with path.open("rb") as f:
                    f.seek(max(0, size - limit - 4 * REACH))
                    text = f.read().decode("utf-8", errors="replace")
                return redacted_tail(text, limit)
    return ""


def unnamed_input(text: str, directory: Path) -> int:
    """A descriptor to read `text` from its start, open on a file no directory names.

    A memfd where the system has one (Linux): the text never reaches a disk. Elsewhere a
    temporary file in `directory`, unlinked before the text is written (`TemporaryFile`). The
    run holds the only reference once alpd closes its own: nothing is left behind either way.
    """
    data = text.encode("utf-8")
    memfd_create = getattr(os, "memfd_create", None)
    if memfd_create is not None:
        fd: int = memfd_create("alp-prompt", os.MFD_CLOEXEC)
    else:  # pragma: no cover - systems without memfd (macOS)
        with tempfile.TemporaryFile(dir=directory) as unnamed:
            fd = os.dup(unnamed.fileno())
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


class Supervisor:
    def __init__(
        self,
        task_group: TaskGroup,
        on_exit: OnExit,
        grace: float = 5.0,
        groups: RunGroups | None = None,
    ) -> None:
        self._tg = task_group
        self.groups = groups
        self._on_exit = on_exit
        self._grace = grace
        self._identities: dict[str, ProcessIdentity] = {}
        #: the runs alpd is ending, with the outcome each will settle as
        self._ending: dict[str, EndedAs] = {}

    def watching(self, execution_id: str) -> bool:
        return execution_id in self._identities

    async def spawn(
        self,
        execution_id: str,
        spec: LaunchSpec,
        exec_dir: Path,
        base_env: Mapping[str, str],
        *,
        before_start: BeforeStart | None = None,
    ) -> ProcessIdentity:
        """Start the run; with `before_start`, its program waits until that has returned
        (it records the pid, so the run is known as such before it can call alp)."""
        env = {**scrub_systemd_env(base_env), **spec.env}
        status_path = str(exec_dir / EXIT_STATUS_FILE)
        procs = self.groups.procs_file(execution_id) if self.groups is not None else None
        gate_read, gate_write = os.pipe() if before_start is not None else (-1, -1)
        if before_start is not None:
            argv = ["/bin/sh", "-c", _JOIN + _GATE + _SHIM, "alp-run", str(procs or "")]
            argv += [str(gate_read), status_path, *spec.argv]
        else:
            argv = ["/bin/sh", "-c", _JOIN + _SHIM, "alp-run", str(procs or "")]
            argv += [status_path, *spec.argv]
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC
        stdin: int = subprocess.DEVNULL
        if spec.stdin is not None:
            # Whole before the run starts (it must not depend on this daemon to read its
            # input), and under no name: only the filtered text is kept.
            write_private_file(exec_dir / PROMPT_FILE, redact(spec.stdin).text)
            stdin = unnamed_input(spec.stdin, exec_dir)
        out = os.open(exec_dir / STDOUT_FILE, flags, 0o600)
        err = os.open(exec_dir / STDERR_FILE, flags, 0o600)
        try:
            process = await anyio.open_process(
                argv,
                stdin=stdin,
                stdout=out,
                stderr=err,
                cwd=spec.cwd,
                env=env,
                start_new_session=True,
                pass_fds=(gate_read,) if gate_read >= 0 else (),
            )
        except OSError as exc:
            if gate_write >= 0:
                os.close(gate_write)
            raise SpawnFailed(f"could not start {spec.argv[0]}: {exc}", argv=spec.argv) from exc
        finally:
            os.close(out)
            os.close(err)
            if stdin != subprocess.DEVNULL:
                os.close(stdin)
            if gate_read >= 0:
                os.close(gate_read)
        if procs is not None and self.groups is not None:
            # The shim joins before it runs anything; this makes it so by the time we return.
            self.groups.join(execution_id, [process.pid])
        identity = identify(process.pid) or ProcessIdentity(process.pid, 0.0, "")
        self._identities[execution_id] = identity
        log.info("run_started", execution=execution_id, pid=process.pid)

        async def watch() -> None:
            returncode = await process.wait()
            status = read_exit_status(exec_dir)
            await self._finish(execution_id, exec_dir, status if status is not None else returncode)

        self._tg.start_soon(watch)
        if before_start is not None:
            try:
                await before_start(identity)
                os.write(gate_write, b"go\n")
            finally:
                os.close(gate_write)  # without a go: the shim exits 125, the run never starts
        return identity

    def adopt(self, execution_id: str, identity: ProcessIdentity, exec_dir: Path) -> None:
        """Watch a run started by an earlier alpd until it ends."""
        if execution_id in self._identities:
            return
        self._identities[execution_id] = identity
        log.info("run_adopted", execution=execution_id, pid=identity.pid)

        async def watch() -> None:
            while is_alive(identity):
                await anyio.sleep(ADOPTED_POLL_SECONDS)
            await self._finish(execution_id, exec_dir, read_exit_status(exec_dir))

        self._tg.start_soon(watch)

    async def _finish(self, execution_id: str, exec_dir: Path, exit_code: int | None) -> None:
        self._identities.pop(execution_id, None)
        if self.groups is not None:
            self.groups.remove(execution_id)
        ended_as = self._ending.pop(execution_id, None)
        report = ExitReport(exit_code, ended_as, output_tail(exec_dir))
        log.info("run_ended", execution=execution_id, exit_code=exit_code, ended_as=ended_as)
        try:
            await self._on_exit(execution_id, report)
        except Exception:
            log.exception("settle_after_exit_failed", execution=execution_id)

    async def cancel(
        self, execution_id: str, identity: ProcessIdentity | None, *, as_: EndedAs = "cancelled"
    ) -> None:
        """End a run and everything it started (a grace, then a kill); its watcher then
        settles it `as_`: `cancelled`, or the guard rail it reached."""
        self._ending.setdefault(execution_id, as_)
        await end_run(execution_id, self._identities.get(execution_id) or identity, self._grace)
