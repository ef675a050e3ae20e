"""The `codex` runtime (Codex CLI).

Codex chooses its own session id; a headless run (`codex exec --json`) announces it in its
first output line, `{"type": "thread.started", "thread_id": …}`, and the rollout is then found
by id under `$CODEX_HOME/sessions/YYYY/MM/DD/` (a local-time date, so we glob the id instead
of computing the day). The session context is delivered as developer instructions
(`-c developer_instructions="…"`): Codex re-sends them with every model request, so its own
compaction cannot drop them — the reason we install no SessionStart hook for Codex (its hooks
only run once trusted, and bypassing trust would also run a repository's unreviewed hooks).
For the same reason a running Codex root takes no deliveries mid-work (`takes_injection`):
codex-cli 0.169.0 runs a hook alp passes only if the person trusted its exact definition, or
with `--dangerously-bypass-hook-trust`, which would run every untrusted hook of the user and
the repository too. Deliveries to it wait for the next round.
Its shell tool is kept from being a login shell (`allow_login_shell=false`): a login shell's
profile resets PATH, and a run could no longer find `alp` (issue 21, point 19).
With `[runtimes.codex] approvals = "chat"`, a headless run gets alp's PreToolUse hook
(protocol/codex_approvals.py): each shell command waits for Approve / Deny on a paired chat.
Codex runs that hook only once the person trusted it (`alp channel trust-codex`); a run is
not started while Codex's config does not hold that trust — it would run every command
unasked (RUNTIME_UNAVAILABLE, saying to run `alp channel trust-codex`).
`alp mcp` is registered with `-c mcp_servers.alp.…` overrides; Codex starts MCP servers
outside its sandbox, so the tools reach alpd's socket even when the sandbox refuses the
shell's connect().
"""

from __future__ import annotations

import json
import os
import re
import time
import tomllib
from datetime import datetime
from pathlib import Path

import psutil

from alpd.domain.runs.agents import RuntimeConfig
from alpd.domain.runs.policy import Policy
from alpd.errors import RuntimeUnavailable
from alpd.files import open_regular
from alpd.runtimes.base import (
    FoundSession,
    LaunchContext,
    LaunchSpec,
    RunFacts,
    find_program,
    label_env,
)
from alpd.runtimes.mcp import codex_mcp_overrides
from protocol.codex_approvals import HOOK_HASH, HOOK_KEY, HOOK_OVERRIDE

SANDBOX_MODES = ("read-only", "workspace-write", "danger-full-access")
#: Codex's sandbox refuses every socket connect() — alp's Unix socket included — unless
#: network access is on, so a run that should pin or delegate from inside its sandbox needs
#: this mode (workspace-write plus network): an explicit choice in the agent definition.
WORKSPACE_WRITE_NETWORK = "workspace-write-network"
_DISCOVERY_BYTES = 64 * 1024


def codex_home(env: dict[str, str]) -> Path:
    if env.get("CODEX_HOME"):
        return Path(env["CODEX_HOME"])
    return Path(env.get("HOME") or os.path.expanduser("~")) / ".codex"


def hook_trusted(env: dict[str, str]) -> bool:
    """Whether the user's Codex config trusts alp's approval hook as alp defines it."""
    try:
        with open_regular(codex_home(env) / "config.toml") as f:
            config = tomllib.load(f)
    except (OSError, ValueError):
        return False
    state = config.get("hooks", {}).get("state", {})
    entry = state.get(HOOK_KEY) if isinstance(state, dict) else None
    return isinstance(entry, dict) and entry.get("trusted_hash") == HOOK_HASH


def require_hook_trust(env: dict[str, str]) -> None:
    if not hook_trusted(env):
        raise RuntimeUnavailable(
            '[runtimes.codex] approvals = "chat", but Codex does not trust alp\'s approval '
            f"hook (its {codex_home(env) / 'config.toml'} has no trust for this definition), so "
            "it would run every command unasked; run `alp channel trust-codex` once, or remove "
            "the approvals key",
            program="codex",
        )


def find_rollout(env: dict[str, str], session_id: str) -> Path | None:
    matches = sorted((codex_home(env) / "sessions").glob(f"*/*/*/rollout-*-{session_id}.jsonl"))
    return matches[-1] if matches else None


_ROLLOUT_NAME = re.compile(
    r"rollout-.*-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$"
)


def open_rollout(pid: int) -> FoundSession | None:
    """(session id, path) of the rollout the process tree of `pid` is writing, if any."""
    try:
        top = psutil.Process(pid)
        processes = [top, *top.children(recursive=True)]
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None
    for process in processes:
        try:
            files = process.open_files()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        for opened in files:
            match = _ROLLOUT_NAME.search(opened.path)
            if match is not None:
                return FoundSession(match.group(1), opened.path)
    return None


def rollouts_since(env: dict[str, str], cwd: str, since: float) -> list[tuple[str, str]]:
    """(id, path) of the rollouts begun at or after `since` whose session ran in `cwd`."""
    found: list[tuple[str, str]] = []
    cwd = os.path.realpath(cwd)
    sessions = codex_home(env) / "sessions"
    # Codex files rollouts by local date: only the days between `since` and now can hold one.
    days = {time.strftime("%Y/%m/%d", time.localtime(t)) for t in (since, time.time())}
    paths = [p for day in sorted(days) for p in (sessions / day).glob("rollout-*.jsonl")]
    for path in paths:
        match = _ROLLOUT_NAME.search(path.name)
        try:
            if match is None or path.stat().st_mtime < since:
                continue
            with open_regular(path) as f:
                meta = json.loads(f.readline() or b"{}")
        except (OSError, ValueError):
            continue
        payload = meta.get("payload") if isinstance(meta, dict) else None
        if not isinstance(payload, dict) or payload.get("cwd") != cwd:
            continue
        if _epoch(payload.get("timestamp")) >= since - 1:
            found.append((match.group(1), str(path)))
    return found


def _epoch(value: object) -> float:
    if not isinstance(value, str):
        return 0.0
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def session_id_from_output(head: bytes) -> str | None:
    """The `thread.started` id from the first lines of `codex exec --json` output."""
    for line in head.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("type") == "thread.started":
            thread_id = event.get("thread_id")
            return thread_id if isinstance(thread_id, str) else None
    return None


class CodexRuntime:
    name = "codex"
    supports_interactive = True
    supports_headless = True
    takes_injection = False
    install_hint = (
        "install Codex CLI (`npm install -g @openai/codex`) or set "
        "[runtimes.codex] command in config.toml"
    )

    def locate_program(self, config: RuntimeConfig, policy: Policy, args: tuple[str, ...]) -> str:
        return find_program("codex", config.command, self.install_hint)

    def launch_spec(self, policy: Policy, ctx: LaunchContext) -> LaunchSpec:
        context = ctx.session_context_path.read_text(encoding="utf-8")
        argv = [ctx.program]
        if policy.headless:
            argv += ["exec", "--json", "--skip-git-repo-check"]
        # The -c value is TOML; a JSON string without ASCII escapes is a valid TOML string.
        argv += ["-c", f"developer_instructions={json.dumps(context, ensure_ascii=False)}"]
        argv += codex_mcp_overrides(ctx)
        # Codex runs its shell tool as a login shell (`bash -lc`) by default, whose profile
        # resets PATH: alp (in a virtualenv, on the run's PATH) was then `command not found`.
        # A plain shell keeps the run's environment, PATH included.
        argv += ["-c", "allow_login_shell=false"]
        if policy.headless and ctx.config.approvals == "chat":
            require_hook_trust({**os.environ, **ctx.config.env})
            argv += ["-c", HOOK_OVERRIDE]
        if policy.permission_mode in SANDBOX_MODES:
            argv += ["--sandbox", policy.permission_mode]
        elif policy.permission_mode == WORKSPACE_WRITE_NETWORK:
            argv += ["--sandbox", "workspace-write"]
            argv += ["-c", "sandbox_workspace_write.network_access=true"]
        if policy.model:
            argv += ["--model", policy.model]
        argv += ["--cd", policy.workspace]
        argv += list(ctx.args)
        if policy.headless:
            argv.append(ctx.prompt or "Continue the work described in the developer instructions.")
        return LaunchSpec(argv=argv, env=label_env(ctx), cwd=policy.workspace)

    def discover_session(self, run: RunFacts) -> FoundSession | None:
        """(native id, rollout path) once the run has announced itself: a headless run in the
        first line of its output; an interactive one (whose output is the user's terminal)
        by the rollout its process tree holds open, or — once it has ended — by the single
        rollout of its cwd begun since it started."""
        try:
            with (run.exec_dir / "stdout.log").open("rb") as f:
                head = f.read(_DISCOVERY_BYTES)
        except OSError:
            head = b""
        session_id = session_id_from_output(head)
        if session_id is not None:
            rollout = find_rollout(run.env, session_id)
            return FoundSession(session_id, str(rollout) if rollout else "")
        if run.pid is not None:
            return open_rollout(run.pid)
        candidates = rollouts_since(run.env, run.cwd, run.started)
        if len(candidates) != 1:
            return None
        return FoundSession(*candidates[0], guessed=True)


ADAPTER = CodexRuntime()
