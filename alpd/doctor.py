"""`daemon/doctor`: the facts `alp doctor` shows, gathered where only the daemon sees them —
its config file read again, its socket, its home's disk, the runtimes on its PATH and their
login files, its background tasks and chat doors. The verdicts are `alpd.domain.doctor`'s.

Read-only and cheap: no model is called (a login is what the runtime's own files or the run's
environment say; `codex login status` only when Codex has no auth file and no key), the file
reads run in a worker thread, and the one subprocess has a 5 s limit.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Final

import anyio

from alpd.config import load_config
from alpd.domain import doctor as verdicts
from alpd.domain.config_fields import ConfigError
from alpd.domain.runs.agents import AgentsConfig
from alpd.runtimes.base import alp_program
from alpd.runtimes.registry import adapters
from protocol import messages as m

if TYPE_CHECKING:
    from alpd.assembly import Runtime

#: the environment variable that moves the disk's warning threshold (tests fake a full disk)
MIN_FREE_ENV: Final = "ALP_DOCTOR_MIN_FREE_BYTES"
#: `codex login status` answers from its auth file in milliseconds; a hung one is not waited on
LOGIN_STATUS_TIMEOUT: Final = 5.0
#: the runtimes whose login alp knows how to read
LOGGED_IN_RUNTIMES: Final = ("claude", "codex")


async def doctor(rt: Runtime) -> m.DoctorResult:
    agents = rt.executions.agents
    checks = await anyio.to_thread.run_sync(_file_checks, rt, agents)
    for task in rt.task_states():
        if task.name != "transcript-reader" and not task.name.startswith("channel-"):
            checks.append(verdicts.task_check(task))
    checks.append(verdicts.meaning_check(rt.meaning.state()))
    for channel in await rt.channels.states():
        if channel.configured:
            checks.append(verdicts.channel_check(channel))
    return m.DoctorResult(checks=checks, alp_bin=alp_program())


def _file_checks(rt: Runtime, agents: AgentsConfig) -> list[m.DoctorCheck]:
    """What reads files or PATH (run in a worker thread)."""
    checks = [_config(rt.config.config_path), _socket(rt.config.socket_path, rt.daemon.uid)]
    usage = shutil.disk_usage(rt.config.home)
    threshold = _threshold(os.environ.get(MIN_FREE_ENV))
    checks.append(verdicts.disk_check(str(rt.config.home), usage.free, usage.total, threshold))
    runtimes = [_runtime(name, agents) for name in LOGGED_IN_RUNTIMES]
    any_found = any(facts.program is not None for facts in runtimes)
    for facts in runtimes:
        checks.extend(verdicts.runtime_checks(facts, any_found=any_found))
    checks.append(verdicts.alp_for_runs_check(alp_program(), shutil.which("alp")))
    return checks


def _threshold(text: str | None) -> int:
    if text is not None and text.isdigit():
        return int(text)
    return verdicts.MIN_FREE_BYTES


def _config(path: Path) -> m.DoctorCheck:
    try:
        load_config(path)
    except ConfigError as exc:
        return verdicts.config_check(str(path), True, str(exc))
    return verdicts.config_check(str(path), path.exists(), None)


def _socket(path: Path, uid: int) -> m.DoctorCheck:
    try:
        st = path.lstat()
    except OSError:
        return verdicts.socket_check(verdicts.SocketFacts(str(path), None, None, uid))
    return verdicts.socket_check(verdicts.SocketFacts(str(path), st.st_mode, st.st_uid, uid))


def _runtime(name: str, agents: AgentsConfig) -> verdicts.RuntimeFacts:
    config = agents.runtime(name)
    wanted = config.command or name
    program = shutil.which(wanted)
    env = {**os.environ, **config.env}
    login, login_file = _claude_login(env) if name == "claude" else _codex_login(env, program)
    return verdicts.RuntimeFacts(
        name=name,
        program=program,
        wanted=wanted,
        install_hint=adapters()[name].install_hint,
        used_by=tuple(sorted(a.name for a in agents.agents.values() if a.runtime == name)),
        login=login,
        login_file=login_file,
    )


def _home(env: dict[str, str]) -> Path:
    return Path(env.get("HOME") or os.path.expanduser("~"))


def _key_set(env: dict[str, str], keys: tuple[str, ...]) -> str | None:
    found = next((key for key in keys if env.get(key)), None)
    return f"{found} is set in the run's environment" if found else None


def _claude_login(env: dict[str, str]) -> tuple[str | None, str]:
    directory = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else None
    credentials = (directory or _home(env) / ".claude") / ".credentials.json"
    if _non_empty(credentials):
        return f"credentials in {credentials}", str(credentials)
    return _key_set(env, verdicts.CLAUDE_KEYS), str(credentials)


def _codex_login(env: dict[str, str], program: str | None) -> tuple[str | None, str]:
    home = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else _home(env) / ".codex"
    auth = home / "auth.json"
    if _non_empty(auth):
        return f"credentials in {auth}", str(auth)
    key = _key_set(env, verdicts.CODEX_KEYS)
    if key is not None or program is None:
        return key, str(auth)
    try:
        done = subprocess.run(
            [program, "login", "status"],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=LOGIN_STATUS_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None, str(auth)
    said = (done.stdout or done.stderr).strip().splitlines()
    if done.returncode == 0:
        return f"`codex login status`: {said[0] if said else 'logged in'}", str(auth)
    return None, str(auth)


def _non_empty(path: Path) -> bool:
    try:
        return path.is_file() and path.stat().st_size > 0
    except OSError:
        return False
