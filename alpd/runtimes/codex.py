"""The `codex` runtime (Codex CLI).

Codex chooses its own session id; a headless run (`codex exec --json`) announces it in its
first output line, `{"type": "thread.started", "thread_id": …}`, and the rollout is then found
by id under `$CODEX_HOME/sessions/YYYY/MM/DD/` (a local-time date, so we glob the id instead
of computing the day). The session context is delivered as developer instructions
(`-c developer_instructions="…"`): Codex re-sends them with every model request, so its own
compaction cannot drop them — the reason we install no SessionStart hook for Codex (its hooks
only run once trusted, and bypassing trust would also run a repository's unreviewed hooks).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from alpd.domain.agents import RuntimeConfig
from alpd.domain.policy import Policy
from alpd.runtimes.base import LaunchContext, LaunchSpec, find_program, label_env

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


def find_rollout(env: dict[str, str], session_id: str) -> Path | None:
    matches = sorted((codex_home(env) / "sessions").glob(f"*/*/*/rollout-*-{session_id}.jsonl"))
    return matches[-1] if matches else None


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
    install_hint = (
        "install Codex CLI (`npm install -g @openai/codex`) or set "
        "[runtimes.codex] command in config.toml"
    )

    def locate_program(self, config: RuntimeConfig, policy: Policy) -> str:
        return find_program("codex", config.command, self.install_hint)

    def launch_spec(self, policy: Policy, ctx: LaunchContext) -> LaunchSpec:
        context = ctx.session_context_path.read_text(encoding="utf-8")
        argv = [ctx.program]
        if policy.headless:
            argv += ["exec", "--json", "--skip-git-repo-check"]
        # The -c value is TOML; a JSON string without ASCII escapes is a valid TOML string.
        argv += ["-c", f"developer_instructions={json.dumps(context, ensure_ascii=False)}"]
        if policy.permission_mode in SANDBOX_MODES:
            argv += ["--sandbox", policy.permission_mode]
        elif policy.permission_mode == WORKSPACE_WRITE_NETWORK:
            argv += ["--sandbox", "workspace-write"]
            argv += ["-c", "sandbox_workspace_write.network_access=true"]
        if policy.model:
            argv += ["--model", policy.model]
        argv += ["--cd", policy.workspace]
        argv += list(policy.args)
        if policy.headless:
            argv.append(ctx.prompt or "Continue the work described in the developer instructions.")
        return LaunchSpec(argv=argv, env=label_env(ctx), cwd=policy.workspace)

    def discover_session(self, exec_dir: Path, env: dict[str, str]) -> tuple[str, str] | None:
        """(native id, rollout path) once the headless run has announced itself."""
        try:
            with (exec_dir / "stdout.log").open("rb") as f:
                head = f.read(_DISCOVERY_BYTES)
        except OSError:
            return None
        session_id = session_id_from_output(head)
        if session_id is None:
            return None
        rollout = find_rollout(env, session_id)
        return session_id, str(rollout) if rollout else ""


ADAPTER = CodexRuntime()
