"""`daemon/ping`, `daemon/status`, `daemon/reload`, `daemon/stop`, `daemon/doctor` and
`web/open`: the daemon's own methods."""

from __future__ import annotations

from typing import Literal

from protocol.messages.base import Wire
from protocol.messages.history import MeaningIndexState


class PingResult(Wire):
    version: str
    protocol: int
    pid: int


class TaskState(Wire):
    name: str
    state: str
    last_run_at: str | None = None
    detail: str | None = None
    #: the last failure of a failing task, as `Type: message`
    last_error: str | None = None
    #: the service's own process, when it has one (the transcript reader)
    pid: int | None = None


class Counts(Wire):
    threads: int = 0
    open_threads: int = 0
    executions: int = 0
    running: int = 0
    history_entries: int = 0


class StatusResult(Wire):
    version: str
    protocol: int
    pid: int
    uptime_seconds: float
    home: str
    socket: str
    database: str
    connections: int
    counts: Counts
    tasks: list[TaskState]
    #: the meaning index: off (and why), building (n of N, rate), stale, ready
    search: MeaningIndexState | None = None


class SweepResult(Wire):
    #: the background tasks once the forced passes are done
    tasks: list[TaskState]


class ReloadResult(Wire):
    #: the file read (the built-in defaults when it does not exist)
    config: str
    agents: list[str]
    runtimes: list[str]


class StopResult(Wire):
    #: the daemon that is stopping: it finishes the requests in flight, then exits
    pid: int


#: a check's verdict: `warn` works for now or for some uses; `fail` stops something working
DoctorStatus = Literal["ok", "warn", "fail"]


class DoctorCheck(Wire):
    """One thing a person needs working, as `alp doctor` shows it."""

    #: what was checked: `config`, `socket`, `disk`, `runtime claude`, `task scheduler` …
    name: str
    status: DoctorStatus
    #: what was found (a path, a state, a figure)
    detail: str
    #: what to do about a `warn` or `fail`
    fix: str | None = None


class DoctorResult(Wire):
    """`daemon/doctor`: the daemon's side of `alp doctor` (the client adds what only it can
    see: the login shell's PATH); read-only, and it never calls a model."""

    checks: list[DoctorCheck]
    #: the `alp` a run is told of (`ALP_BIN`), None when alpd found none
    alp_bin: str | None = None


class WebOpenParams(Wire):
    pass


class WebOpenResult(Wire):
    #: the page, e.g. http://127.0.0.1:8765/
    url: str
    #: opens the page once and sets its cookie; a new one is made by every web/open
    login_url: str
    port: int
    #: false when the page was already being served before this call
    started: bool
    #: no longer sent: the page's token lives in alpd's memory only (a file the user can
    #: read, a run of theirs can read too); a script logs in through `loginUrl`
    token_file: str | None = None


__all__ = [
    "Counts",
    "DoctorCheck",
    "DoctorResult",
    "DoctorStatus",
    "PingResult",
    "ReloadResult",
    "StatusResult",
    "StopResult",
    "SweepResult",
    "TaskState",
    "WebOpenParams",
    "WebOpenResult",
]
