"""OS processes of runs: identity that survives pid reuse, liveness, and ending whole trees.

A run is identified by (pid, start time, boot id): a pid alone can be reused after the run
ends, and start times restart with the machine. Ending a run: SIGTERM to its process group,
a grace period, then SIGKILL to whatever is left — including descendants that left the group
with setsid/double-fork. Those are found by the `ALP_EXECUTION_ID` label every process of a
run inherits (a process may drop it; then it also gave up being part of the run).

Only processes that are provably the run's are signalled: the root (pid *and* start time),
its descendants, and labelled processes of the same user born after the root. Never pid 1,
never alpd or one of its ancestors, never another user's process, and the process group
only when the root leads it (`protected`).
"""

from __future__ import annotations

import contextlib
import os
import signal
from dataclasses import dataclass
from functools import cache

import anyio
import psutil

from alpd.supervisor import cgroups


@dataclass(frozen=True, slots=True)
class ProcessIdentity:
    pid: int
    start_time: float
    boot_id: str


@cache
def boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip()
    except OSError:
        return f"boot-{psutil.boot_time():.0f}"


def identify(pid: int) -> ProcessIdentity | None:
    try:
        return ProcessIdentity(pid, psutil.Process(pid).create_time(), boot_id())
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None


def descendants(pid: int) -> list[int]:
    """The pids of `pid`'s descendants now."""
    try:
        return [child.pid for child in psutil.Process(pid).children(recursive=True)]
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return []


def label_of(pid: int) -> str | None:
    """The `ALP_EXECUTION_ID` label in process `pid`'s environment (None: none, or unread)."""
    try:
        return psutil.Process(pid).environ().get("ALP_EXECUTION_ID") or None
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, OSError):
        return None


def uid_of(pid: int) -> int | None:
    """The real uid of process `pid` (None when it is gone or hidden)."""
    try:
        return int(psutil.Process(pid).uids().real)
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None


def is_alive(identity: ProcessIdentity) -> bool:
    """True while the very process of `identity` runs (not a zombie, not a reused pid)."""
    if identity.boot_id != boot_id():
        return False
    try:
        process = psutil.Process(identity.pid)
        if abs(process.create_time() - identity.start_time) > 0.01:
            return False
        return process.status() != psutil.STATUS_ZOMBIE
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


def ended_uncollected_by(identity: ProcessIdentity, parent_pid: int | None) -> bool:
    """True while the process of `identity` has ended but `parent_pid`, its parent, has not
    collected its exit status yet (a zombie of that parent): the parent still holds how it
    ended. `alp` keeps its interactive run in that state until it has settled the root."""
    if parent_pid is None or identity.boot_id != boot_id():
        return False
    try:
        process = psutil.Process(identity.pid)
        if abs(process.create_time() - identity.start_time) > 0.01:
            return False
        return process.status() == psutil.STATUS_ZOMBIE and process.ppid() == parent_pid
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


def ancestry(pid: int, limit: int = 64) -> list[int]:
    """`pid` and its parents up to init (bounded, so a loop in /proc cannot hang us)."""
    chain: list[int] = []
    with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
        process: psutil.Process | None = psutil.Process(pid)
        while process is not None and len(chain) < limit:
            chain.append(process.pid)
            process = process.parent()
    return chain


def protected(pid: int) -> str | None:
    """Why `pid` must never be attached to a run or signalled for one (None: it may be):
    `init` for pid 1 and below, `alpd` for the daemon itself and its ancestors."""
    if pid <= 1:
        return "init"
    if pid in ancestry(os.getpid()):
        return "alpd"
    return None


def members(execution_id: str, root: ProcessIdentity | None) -> list[psutil.Process]:
    """Every live process of a run that is provably its own: the members of its cgroup
    (alpd.supervisor.cgroups), the root (its start time checked) and its descendants, and
    processes of this user labelled with the run that were born after the root (a label alone
    proves nothing: an older process cannot be the run's). Without a live root only the
    cgroup's members are found: no start time, no proof."""
    found: dict[int, psutil.Process] = {}
    groups = cgroups.active()
    if groups is not None:
        for pid in groups.members(execution_id):
            with contextlib.suppress(psutil.NoSuchProcess):
                found[pid] = psutil.Process(pid)
    if root is None or not is_alive(root):
        return [process for process in found.values() if protected(process.pid) is None]
    with contextlib.suppress(psutil.NoSuchProcess):
        top = psutil.Process(root.pid)
        found[top.pid] = top
        for child in top.children(recursive=True):
            found[child.pid] = child
    uid = os.getuid()
    for process in psutil.process_iter(["uids", "create_time"]):
        if process.pid in found:
            continue
        try:
            if process.info["uids"] is None or process.info["uids"].real != uid:
                continue
            if (process.info["create_time"] or 0.0) < root.start_time:
                continue
            if process.environ().get("ALP_EXECUTION_ID") == execution_id:
                found[process.pid] = process
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return [process for process in found.values() if protected(process.pid) is None]


def _leads_its_group(root: ProcessIdentity) -> bool:
    """The root is alive and the leader of its own process group (a headless run, started
    in a session of its own): only then is its group the run's to signal."""
    if protected(root.pid) is not None or not is_alive(root):
        return False
    try:
        return os.getpgid(root.pid) == root.pid
    except OSError:
        return False


def labelled_processes(uid: int) -> list[tuple[str, int, str]]:
    """(execution id, pid, command) of every live process of `uid` that carries an
    `ALP_EXECUTION_ID` label, alpd's own process left out; the command cut to 200 characters."""
    found: list[tuple[str, int, str]] = []
    for process in psutil.process_iter(["uids"]):
        if process.pid == os.getpid():
            continue
        try:
            if process.info["uids"] is None or process.info["uids"].real != uid:
                continue
            label = process.environ().get("ALP_EXECUTION_ID")
            if not label or process.status() == psutil.STATUS_ZOMBIE:
                continue
            command = " ".join(process.cmdline()) or process.name()
            found.append((label, process.pid, command[:200]))
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def _signal_all(processes: list[psutil.Process], signum: int) -> None:
    for process in processes:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            process.send_signal(signum)


async def end_run(execution_id: str, root: ProcessIdentity | None, grace: float = 5.0) -> None:
    """SIGTERM the run's group and members, wait up to `grace`, then SIGKILL what is left."""
    targets = members(execution_id, root)
    group = root is not None and _leads_its_group(root)
    if group and root is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(root.pid, signal.SIGTERM)
    _signal_all(targets, signal.SIGTERM)
    with anyio.move_on_after(grace):
        while any(_running(p) for p in targets):
            await anyio.sleep(0.05)
    # Look again: a process may have forked while dying.
    leftovers = [p for p in [*targets, *members(execution_id, root)] if _running(p)]
    if group and root is not None:
        # The group was the root's when we began; a pid is not reused while it is the id
        # of a process group that still has members, so this reaches only what is left of it.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(root.pid, signal.SIGKILL)
    _signal_all(leftovers, signal.SIGKILL)
    groups = cgroups.active()
    if groups is not None and all(protected(pid) is None for pid in groups.members(execution_id)):
        # Atomic, so nothing forks its way out; never when alpd or init was moved in there.
        groups.kill(execution_id)


def _running(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
