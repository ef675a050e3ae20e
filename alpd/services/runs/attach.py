"""Which process may stand for an interactive run (`execution/attach`).

What is attached is what `execution/cancel` signals and whose descendants may pin into the
thread: only a process the caller (or the run's launcher) started may be, never init, alpd
or one of their ancestors (docs/architecture.md, "Attaching an interactive run").
"""

from __future__ import annotations

from alpd.errors import PermissionDenied
from alpd.services.context import Caller
from alpd.supervisor.processes import ancestry, protected, uid_of


def refuse_foreign_process(caller: Caller, launcher_pid: int | None, pid: int) -> None:
    """PERMISSION_DENIED unless `pid` may stand for an interactive run: a process the caller
    (or the run's launcher) started, of the caller's uid — never pid 1, alpd or one of its
    ancestors, nor the caller or one of its ancestors. Whatever is attached is what
    `execution/cancel` signals and whose descendants may pin into the thread."""
    reason = protected(pid)
    if reason == "init":
        raise PermissionDenied(
            f"process {pid} is init: attach the process your client started for this run",
            pid=pid,
            reason="init",
        )
    if pid in ancestry(caller.pid):
        raise PermissionDenied(
            f"process {pid} is the caller or one of its ancestors: attach the child your "
            "client started for this run, not the client or its shell",
            pid=pid,
            reason="ancestor",
        )
    if reason == "alpd":
        raise PermissionDenied(
            f"process {pid} is alpd or one of its ancestors, never a run: attach the process "
            "your client started for this run",
            pid=pid,
            reason="alpd",
        )
    chain = ancestry(pid)[1:]
    parents = {caller.pid} if launcher_pid is None else {caller.pid, launcher_pid}
    if not parents.intersection(chain):
        raise PermissionDenied(
            f"process {pid} was not started by the caller nor by the run's launcher: attach "
            "the process your client started for this run",
            pid=pid,
            reason="not-a-descendant",
        )
    owner = uid_of(pid)
    if owner != caller.uid:
        raise PermissionDenied(
            f"process {pid} belongs to another user", pid=pid, reason="other-user"
        )


__all__ = ["refuse_foreign_process"]
