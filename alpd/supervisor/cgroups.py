"""A cgroup (v2) per run: the membership a run's processes cannot shed by `setsid`, a double
fork or `env -i`.

Where alpd may create cgroups under its own (cgroup v2, and alpd's cgroup writable: root, or
a subtree delegated to the user, e.g. `Delegate=yes` on `alpd.service`), every run gets one:
`<alpd's cgroup>/alp-<uid>-<home digest>/<execution id>`. A headless run (and a delegated
child) joins its cgroup before its program starts (the supervisor's shell wrapper writes its
own pid into `cgroup.procs`, then runs the program); an interactive run is moved there when
its client attaches it, with the descendants it has by then. Everything they start is born
inside. A process is recognised as a run's by reading `/proc/PID/cgroup`: a path with the
`alp-<uid>-<home digest>` component followed by an execution id. Cancel signals the
cgroup's members and, where the kernel has it, writes `cgroup.kill`.

What it does not stop: a process of the same user may write its own pid into another
cgroup's `cgroup.procs` where it may write (a delegated subtree is the user's) — leaving the
run takes that deliberate act, not a `setsid`. Where there is no such cgroup (cgroup v1 only,
no delegation, `ALP_RUN_CGROUPS=off`), runs are found as before: process ancestry, and the
`ALP_EXECUTION_ID` label, which a run can clear (docs/architecture.md, "Finding the caller's
execution").
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path
from typing import Final

import structlog

log = structlog.get_logger("alpd.cgroups")

#: set to `off` to run without cgroups (the fallback: ancestry and the label)
SWITCH: Final = "ALP_RUN_CGROUPS"
PROCS: Final = "cgroup.procs"

_active: RunGroups | None = None


class RunGroups:
    """The cgroups of one alpd's runs, under `base` (named `marker`)."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.marker = base.name

    def path(self, execution_id: str) -> Path:
        return self.base / execution_id

    def procs_file(self, execution_id: str) -> Path | None:
        """The run's `cgroup.procs`, made if need be (None: it cannot be made)."""
        path = self.path(execution_id)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            log.warning("run_cgroup_unavailable", execution=execution_id, error=str(exc))
            return None
        return path / PROCS

    def join(self, execution_id: str, pids: list[int]) -> bool:
        """Move `pids` into the run's cgroup (False when any could not be moved)."""
        procs = self.procs_file(execution_id)
        if procs is None:
            return False
        moved = True
        for pid in pids:
            try:
                procs.write_text(f"{pid}\n")
            except OSError as exc:
                moved = False
                log.warning(
                    "run_cgroup_join_failed", execution=execution_id, pid=pid, error=str(exc)
                )
        return moved

    def run_of(self, pid: int) -> str | None:
        """The execution whose cgroup process `pid` is in (None: none of ours)."""
        parts = cgroup_of(pid).split("/")
        for index, part in enumerate(parts[:-1]):
            if part == self.marker and parts[index + 1]:
                return parts[index + 1]
        return None

    def members(self, execution_id: str) -> list[int]:
        """The pids in the run's cgroup and in any cgroup below it."""
        found: list[int] = []
        top = self.path(execution_id)
        if not top.is_dir():
            return found
        for directory, _dirs, _files in os.walk(top):
            with contextlib.suppress(OSError):
                text = (Path(directory) / PROCS).read_text()
                found.extend(int(line) for line in text.split() if line.isdigit())
        return found

    def kill(self, execution_id: str) -> None:
        """SIGKILL every member at once through `cgroup.kill` (Linux 5.14+; a no-op before:
        the members were signalled one by one already)."""
        with contextlib.suppress(OSError):
            (self.path(execution_id) / "cgroup.kill").write_text("1\n")

    def remove(self, execution_id: str) -> None:
        """Remove the run's cgroup once it is empty (a non-empty one stays: its processes
        are still the run's)."""
        top = self.path(execution_id)
        for directory, _dirs, _files in sorted(os.walk(top), key=lambda w: -len(w[0])):
            with contextlib.suppress(OSError):
                os.rmdir(directory)

    def close(self) -> None:
        """Remove every run cgroup that is empty, and ours when nothing is left in it."""
        with contextlib.suppress(OSError):
            for child in self.base.iterdir():
                if child.is_dir():
                    self.remove(child.name)
        with contextlib.suppress(OSError):
            self.base.rmdir()


def cgroup_of(pid: int) -> str:
    """Process `pid`'s cgroup v2 path (`0::/…`), or '' when it has none or is gone."""
    try:
        with open(f"/proc/{pid}/cgroup") as f:
            for line in f:
                if line.startswith("0::"):
                    return line[3:].strip()
    except OSError:
        pass
    return ""


def _cgroup2_mount() -> Path | None:
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                left, _, right = line.partition(" - ")
                if right.split(" ", 1)[0] == "cgroup2":
                    return Path(left.split()[4])
    except OSError:
        pass
    return None


def detect(home: Path, uid: int, environ: dict[str, str] | None = None) -> RunGroups | None:
    """The cgroups runs get under alpd's own cgroup, or None where they cannot be made."""
    if (environ if environ is not None else os.environ).get(SWITCH, "").lower() in (
        "off",
        "0",
        "no",
    ):
        return None
    mount = _cgroup2_mount()
    own = cgroup_of(os.getpid())
    if mount is None or not own:
        return None
    digest = hashlib.sha256(str(home.resolve()).encode()).hexdigest()[:12]
    parent = mount / own.lstrip("/")
    _sweep(parent, f"alp-{uid}-")
    base = parent / f"alp-{uid}-{digest}"
    try:
        base.mkdir(exist_ok=True)
    except OSError:
        return None
    if not os.access(base / PROCS, os.W_OK):
        return None
    return RunGroups(base)


def _sweep(parent: Path, prefix: str) -> None:
    """Remove empty cgroups an earlier alpd of this user left (one killed before its stop):
    only an empty cgroup can be removed, so no run of a live alpd is touched (and a live
    alpd whose empty base went makes it again at its next run)."""
    with contextlib.suppress(OSError):
        for stale in parent.iterdir():
            if stale.name.startswith(prefix) and stale.is_dir():
                RunGroups(stale).close()


def install(groups: RunGroups | None) -> None:
    """Make `groups` the ones `active()` answers (one alpd per process)."""
    global _active
    _active = groups


def active() -> RunGroups | None:
    return _active
