"""`alp doctor`'s verdicts: facts in (a stat, a state, what a directory holds), one
`DoctorCheck` out — ok, warn or fail, with what to do (pure: `alpd.doctor` gathers the facts).

The rules, in the order `alp doctor` lists the checks:

- **config**: a file that does not parse fails with its line (the daemon keeps the config it
  read before); no file is ok (the built-in defaults).
- **socket**: the daemon's own socket must be a socket owned by the daemon's user, mode 0600
  (a wider mode lets other users of the machine connect, and the listener sets 0600).
- **disk**: the home's filesystem with less free space than the threshold (1 GiB unless
  `ALP_DOCTOR_MIN_FREE_BYTES` says otherwise) warns; the database refuses writes when the disk
  is full (STORAGE_FULL).
- **runtime NAME**: the program not found fails when an agent of config.toml uses it, else it
  warns (a runtime nobody uses need not be installed). Found, it is "logged in" when its own
  files or environment say so — never by calling a model: Claude's `.credentials.json` (in
  `CLAUDE_CONFIG_DIR`, else `~/.claude`) or a key in the run's environment; Codex's `auth.json`
  (in `CODEX_HOME`, else `~/.codex`), a key in the environment, or `codex login status`
  answering 0. Not logged in warns: a configured provider may need none of these.
- **alp for runs**: a run is told alp's path (`ALP_BIN`); none fails (a run cannot pin,
  delegate or hand off); `alp` missing from alpd's PATH (which runs inherit) warns.
- **web**, **task NAME**, **search**, **channel NAME**: a background task `failing` fails with
  its last error; the meaning index `off` is ok with its reason (keyword search still works)
  unless it is off by an error; a configured channel `refused` or `failing` fails,
  `backing-off` warns.
"""

from __future__ import annotations

import stat
from dataclasses import dataclass
from typing import Final

from protocol import messages as m

#: the free space under which the home's disk warns (ALP_DOCTOR_MIN_FREE_BYTES overrides)
MIN_FREE_BYTES: Final = 1024**3
SOCKET_MODE: Final = 0o600

#: what in a run's environment stands for a login, per runtime
CLAUDE_KEYS: Final = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
CODEX_KEYS: Final = ("OPENAI_API_KEY", "CODEX_API_KEY")


def _check(name: str, status: m.DoctorStatus, detail: str, fix: str | None = None) -> m.DoctorCheck:
    return m.DoctorCheck(name=name, status=status, detail=detail, fix=fix)


def config_check(path: str, exists: bool, error: str | None) -> m.DoctorCheck:
    if error is not None:
        return _check(
            "config",
            "fail",
            error,
            "fix that line, then `alp daemon reload` (alpd keeps the config it read before)",
        )
    if not exists:
        return _check("config", "ok", f"{path} not there: the built-in defaults")
    return _check("config", "ok", f"{path} is valid")


@dataclass(frozen=True, slots=True)
class SocketFacts:
    path: str
    #: None: nothing at the path (or it could not be read)
    mode: int | None
    owner: int | None
    uid: int


def socket_check(facts: SocketFacts) -> m.DoctorCheck:
    if facts.mode is None or facts.owner is None:
        return _check(
            "socket",
            "fail",
            f"{facts.path}: nothing there, yet this daemon answered on it",
            "another process removed it: `alp daemon stop`, then start alpd again",
        )
    permissions = stat.S_IMODE(facts.mode)
    shown = f"{facts.path} (mode {permissions:04o}, owner uid {facts.owner})"
    if not stat.S_ISSOCK(facts.mode):
        return _check("socket", "fail", f"{shown} is not a socket", "restart alpd")
    if facts.owner != facts.uid:
        return _check(
            "socket",
            "fail",
            f"{shown}: not owned by the daemon's user (uid {facts.uid})",
            f"remove it and restart alpd as uid {facts.owner}'s owner",
        )
    if permissions & ~SOCKET_MODE:
        return _check(
            "socket",
            "warn",
            f"{shown}: others than you may connect",
            f"chmod 600 {facts.path} (alpd sets it; something widened it)",
        )
    return _check("socket", "ok", shown)


def disk_check(home: str, free: int, total: int, threshold: int) -> m.DoctorCheck:
    shown = f"{home}: {_size(free)} free of {_size(total)}"
    if free < threshold:
        return _check(
            "disk",
            "warn",
            f"{shown}, under {_size(threshold)}",
            "free some space on that filesystem: a full disk stops alp's writes (STORAGE_FULL)",
        )
    return _check("disk", "ok", shown)


def _size(count: int) -> str:
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


@dataclass(frozen=True, slots=True)
class RuntimeFacts:
    name: str
    #: the program found, or None
    program: str | None
    #: what was looked for when not found (the configured command, or the name on PATH)
    wanted: str
    install_hint: str
    #: agents of config.toml that run on it
    used_by: tuple[str, ...]
    #: what says it is logged in (a file, a variable), or None
    login: str | None
    #: the file whose absence means no login, for the fix
    login_file: str


def runtime_checks(facts: RuntimeFacts, *, any_found: bool) -> list[m.DoctorCheck]:
    """Found (or not), then logged in (only when found). `any_found`: whether any agent
    runtime was found (with none, no agent can run: each missing one fails)."""
    name = f"runtime {facts.name}"
    if facts.program is None:
        agents = [agent for agent in facts.used_by if agent != facts.name]
        needed = bool(agents)
        users = f"; config.toml's agents use it: {', '.join(agents)}" if needed else ""
        none = "" if any_found else "; no agent runtime at all"
        return [
            _check(
                name,
                "fail" if needed or not any_found else "warn",
                f"{facts.wanted!r} not found on alpd's PATH{users}{none}",
                f"{facts.install_hint}; then `alp daemon reload`",
            )
        ]
    found = _check(name, "ok", facts.program)
    if facts.login is not None:
        return [found, _check(f"login {facts.name}", "ok", facts.login)]
    fix = {
        "claude": "run `claude` once and /login, or set ANTHROPIC_API_KEY in alpd's environment "
        "(or [runtimes.claude] env)",
        "codex": "run `codex login`, or set OPENAI_API_KEY in alpd's environment "
        "(or [runtimes.codex] env)",
    }.get(facts.name, f"log {facts.name} in")
    return [
        found,
        _check(f"login {facts.name}", "warn", f"no {facts.login_file} and no key set", fix),
    ]


def alp_for_runs_check(alp_bin: str | None, on_path: str | None) -> m.DoctorCheck:
    """`alp_bin`: what runs get as ALP_BIN; `on_path`: `alp` on alpd's PATH (runs inherit it)."""
    if alp_bin is None:
        return _check(
            "alp for runs",
            "fail",
            "alpd finds no `alp`: a run cannot pin, delegate, hand off or push",
            "install alp in the environment alpd runs from (beside its python), or put it on "
            "alpd's PATH, then restart alpd",
        )
    if on_path is None:
        return _check(
            "alp for runs",
            "warn",
            f"ALP_BIN={alp_bin}, but `alp` is not on alpd's PATH (runs inherit it)",
            "agents that call plain `alp` fail: add its directory to alpd's PATH (systemd: "
            "Environment=PATH=…), then restart alpd",
        )
    return _check("alp for runs", "ok", f"ALP_BIN={alp_bin}; on alpd's PATH: {on_path}")


def task_check(task: m.TaskState) -> m.DoctorCheck:
    name = "web" if task.name == "web" else f"task {task.name}"
    detail = task.state + (f": {task.detail}" if task.detail else "")
    if task.state == "failing":
        return _check(
            name,
            "fail",
            f"failing: {task.last_error or task.detail or 'no error recorded'}",
            "alpd retries it; its log says more (`journalctl --user -u alpd` or alpd's stderr)",
        )
    if task.name == "web" and task.state == "off":
        return _check(name, "ok", "off: `alp web` serves it and prints a login URL")
    return _check(name, "ok", detail)


def meaning_check(state: m.MeaningIndexState | None) -> m.DoctorCheck:
    """The meaning index (docs/search.md): off is ok (keyword search works) with its reason
    and, when no model is there, the command that fetches one; a failing embedder warns."""
    if state is None:
        return _check("search", "ok", "keyword search (no meaning index)")
    if state.error:
        return _check(
            "search", "warn", f"{state.state}: {state.error}", "alpd retries; see docs/search.md"
        )
    if state.state == "off":
        reason = state.reason or "no embedder"
        fix = (
            "`alp model fetch` (potion-base-8M, ~30 MB)" if "no model2vec model" in reason else None
        )
        return _check("search", "ok", f"keyword only; meaning off: {reason}", fix)
    progress = f"{state.embedded} of {state.total} chunks" if state.total else ""
    if state.rate:
        progress += f", {state.rate:g}/s"
    if state.state == "building":
        return _check("search", "ok", f"building the meaning index: {progress or 'starting'}")
    if state.state == "stale":
        return _check(
            "search",
            "ok",
            f"rebuilding for the new model {state.model} ({progress}); the previous model "
            "answers meanwhile",
        )
    return _check("search", "ok", f"{state.state} ({state.embedder}, {state.embedded} chunks)")


def channel_check(channel: m.ChannelState) -> m.DoctorCheck:
    name = f"channel {channel.channel}"
    detail = channel.state + (f": {channel.detail}" if channel.detail else "")
    if channel.state in ("refused", "failing"):
        return _check(name, "fail", detail, "see docs/channels.md (token, network, one poller)")
    if channel.state == "backing-off":
        return _check(name, "warn", detail, "alpd retries; check the network and api_url")
    senders = len(channel.senders)
    if senders == 0:
        return _check(
            name, "warn", f"{detail}; no sender paired", f"alp channel pair {channel.channel}"
        )
    return _check(name, "ok", f"{detail}; {senders} sender{'s' * (senders != 1)} paired")


__all__ = [
    "CLAUDE_KEYS",
    "CODEX_KEYS",
    "MIN_FREE_BYTES",
    "RuntimeFacts",
    "SocketFacts",
    "alp_for_runs_check",
    "channel_check",
    "config_check",
    "disk_check",
    "meaning_check",
    "runtime_checks",
    "socket_check",
    "task_check",
]
