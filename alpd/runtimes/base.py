"""The runtime adapter interface: how one agent CLI is launched for a policy.

An adapter is pure as far as it can be: `launch_spec` turns a policy and a launch context
into argv/env/cwd, and `locate_program` is the one place that looks at PATH. The runtime
arguments to run are `ctx.args` (verbatim, checked against the policy's `argsDigest` before
any spawn), never `policy.args`: from policy version 3 those are stored secret-filtered.
Adapters are found by name in `alpd.runtimes.registry` (built-ins plus the `alp.runtimes`
entry points).
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Protocol

from alpd.domain.runs.agents import RuntimeConfig
from alpd.domain.runs.policy import Policy
from alpd.errors import RuntimeUnavailable

SESSION_CONTEXT_FILE = "session-context.md"


@dataclass(frozen=True, slots=True)
class LaunchContext:
    """Everything about one run that is not policy: ids, paths, the prompt."""

    execution_id: str
    thread_id: str | None
    exec_dir: Path
    session_context_path: Path
    socket_path: Path
    prompt: str | None
    config: RuntimeConfig
    program: str
    #: the verbatim runtime arguments the policy authorized (`policy.args` are filtered)
    args: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RunFacts:
    """What alpd knows of a run whose native session it is still looking for."""

    exec_dir: Path
    env: dict[str, str]
    cwd: str
    #: the run's process while it is alive, else None
    pid: int | None
    #: epoch seconds when the run started
    started: float


@dataclass(frozen=True, slots=True)
class FoundSession:
    """A run's native session: its id, its transcript ("" while unknown), and whether it was
    inferred (from what ran where and when) rather than announced by the run itself."""

    session_id: str
    transcript_path: str
    guessed: bool = False


@dataclass(frozen=True, slots=True)
class LaunchSpec:
    """What to execute. `env` holds only additions to the inherited environment."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    native_session_id: str | None = None
    transcript_path: str | None = None
    files: dict[str, str] = field(default_factory=dict)
    #: text a headless run reads on its standard input (None: /dev/null)
    stdin: str | None = None


class RuntimeAdapter(Protocol):
    name: str
    supports_interactive: bool
    supports_headless: bool
    #: whether a running root takes deliveries mid-work (a hook alp installs asks
    #: `delivery/pending`); False: they wait for the next round
    takes_injection: bool
    #: what to tell a user whose machine lacks the program
    install_hint: str

    def locate_program(self, config: RuntimeConfig, policy: Policy, args: tuple[str, ...]) -> str:
        """The program to run, or RUNTIME_UNAVAILABLE naming what was looked for (`args`:
        the verbatim runtime arguments)."""
        ...

    def launch_spec(self, policy: Policy, ctx: LaunchContext) -> LaunchSpec: ...

    def discover_session(self, run: RunFacts) -> FoundSession | None:
        """The session of a runtime that chooses its own id and announces it while running;
        None while unknown, or when ids are chosen up front."""
        ...


@cache
def alp_program() -> str | None:
    """The absolute path of the `alp` command of this installation: the script beside the
    interpreter running alpd (a virtualenv's `bin/`), else `alp` on PATH; None if neither."""
    beside = Path(sys.executable).parent / "alp"
    if os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("alp")


def label_env(ctx: LaunchContext) -> dict[str, str]:
    """The labels every runtime process gets (docs/contract.md): labels only, never authority.
    `ALP_BIN` names alp by its absolute path, for shells that lost it from PATH."""
    env = {
        "ALP_SOCKET": str(ctx.socket_path),
        "ALP_EXECUTION_ID": ctx.execution_id,
        "ALP_SESSION_CONTEXT": str(ctx.session_context_path),
    }
    program = alp_program()
    if program is not None:
        env["ALP_BIN"] = program
    if ctx.thread_id is not None:
        env["ALP_THREAD_ID"] = ctx.thread_id
    return {**ctx.config.env, **env}


def find_program(name: str, configured: str | None, install_hint: str) -> str:
    """`configured` (config.toml's `command`) or `name` on PATH, else RUNTIME_UNAVAILABLE."""
    wanted = configured or name
    found = shutil.which(wanted)
    if found is None:
        raise RuntimeUnavailable(
            f"{wanted!r} was not found on PATH"
            f"{' (the command configured in config.toml)' if configured else ''}; {install_hint}",
            program=wanted,
        )
    return found
