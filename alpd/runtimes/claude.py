"""The `claude` runtime (Claude Code).

We choose the native session id up front (`--session-id`), so the transcript path is known
before the run starts: `$CLAUDE_CONFIG_DIR/projects/<encoded realpath cwd>/<id>.jsonl`
(docs/runtimes.md). The session context goes in as system-prompt text
(`--append-system-prompt-file`), never as a user message. Hooks installed through
`--settings`: SessionStart re-injects it when Claude Code compacts the conversation (`source:
compact`); PostToolUse (after every tool call) and UserPromptSubmit ask alpd for the
deliveries waiting for the run (`alp hook deliver`), whose answer Claude Code adds to the very
next model request — measured with 2.1.328: a `system` message after the tool result.
Headless runs use `-p … --output-format stream-json --verbose` with stdin /dev/null (an open
stdin costs a 3 s wait), and `--permission-prompt-tool mcp__alp__approve`: a tool call the
policy neither allows nor denies asks the person on a paired chat (`alp mcp`'s `approve`,
`approval/request`) instead of failing at once; with no chat paired, or no answer by the
timeout, it is denied as before, with a reason the model reads (docs/channels.md).
"""

from __future__ import annotations

import json
import os
import re
import sys
import uuid
from pathlib import Path

from alpd.domain.runs.agents import RuntimeConfig
from alpd.domain.runs.policy import Policy
from alpd.runtimes.base import (
    FoundSession,
    LaunchContext,
    LaunchSpec,
    RunFacts,
    find_program,
    label_env,
)
from alpd.runtimes.mcp import SERVER_NAME, write_claude_mcp_config

_NON_ALNUM = re.compile(r"[^A-Za-z0-9]")

#: alp's own commands a run may always call. They grant nothing beyond the policy: the
#: daemon itself checks that a pin lands only in the caller's own execution, that a
#: delegation is in the policy's delegatesTo, and a handoff's owner and loop guards.
#: Without them Claude Code's default permission mode refuses the Bash call in `-p` runs,
#: and no work state could be pinned.
#: Claude Code's permission prompt tool for headless runs (`alp mcp`'s `approve`)
PERMISSION_PROMPT_TOOL = f"mcp__{SERVER_NAME}__approve"

ALP_TOOLS = (
    "Bash(alp context pin:*)",
    "Bash(alp delegate:*)",
    "Bash(alp thread show:*)",
    "Bash(alp handoff:*)",
    f"mcp__{SERVER_NAME}",
)
_MAX_ENCODED = 200


def _java_string_hash(text: str) -> int:
    """Java's String.hashCode over UTF-16 code units, as a signed 32-bit int."""
    data = text.encode("utf-16-le")
    value = 0
    for index in range(0, len(data), 2):
        value = (31 * value + (data[index] | data[index + 1] << 8)) & 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
        if number == 0:
            return out


def encode_project_dir(cwd: str) -> str:
    """Claude Code's directory name for a cwd: every non-alphanumeric → '-', long names hashed."""
    encoded = _NON_ALNUM.sub("-", cwd)
    if len(encoded) <= _MAX_ENCODED:
        return encoded
    return f"{encoded[:_MAX_ENCODED]}-{_base36(abs(_java_string_hash(cwd)))}"


def config_dir(env: dict[str, str]) -> Path:
    if env.get("CLAUDE_CONFIG_DIR"):
        return Path(env["CLAUDE_CONFIG_DIR"])
    return Path(env.get("HOME") or os.path.expanduser("~")) / ".claude"


def transcript_path(env: dict[str, str], cwd: str, session_id: str) -> Path:
    project = encode_project_dir(os.path.realpath(cwd))
    return config_dir(env) / "projects" / project / f"{session_id}.jsonl"


#: seconds Claude Code waits for `alp hook deliver` (its default is 60): a stuck daemon must
#: not hold the run up; what was not handed out waits for the next call or round
DELIVER_HOOK_TIMEOUT = 10


def hook_settings() -> str:
    """`--settings` JSON installing alp's hooks: SessionStart for compactions only, and the
    delivery hook after each tool call and on each prompt."""

    def command(name: str, **extra: object) -> dict[str, object]:
        return {"type": "command", "command": f"{sys.executable} -m alpctl hook {name}", **extra}

    deliver = command("deliver", timeout=DELIVER_HOOK_TIMEOUT)
    hooks = {
        "SessionStart": [{"matcher": "compact", "hooks": [command("session-start")]}],
        "PostToolUse": [{"matcher": "*", "hooks": [deliver]}],
        "UserPromptSubmit": [{"hooks": [deliver]}],
    }
    return json.dumps({"hooks": hooks}, separators=(",", ":"))


class ClaudeRuntime:
    name = "claude"
    supports_interactive = True
    supports_headless = True
    takes_injection = True
    install_hint = (
        "install Claude Code (`npm install -g @anthropic-ai/claude-code`) or set "
        "[runtimes.claude] command in config.toml"
    )

    def locate_program(self, config: RuntimeConfig, policy: Policy, args: tuple[str, ...]) -> str:
        return find_program("claude", config.command, self.install_hint)

    def launch_spec(self, policy: Policy, ctx: LaunchContext) -> LaunchSpec:
        session_id = str(uuid.uuid4())
        argv = [ctx.program]
        if policy.headless:
            argv += ["-p", ctx.prompt or "Continue the work described in the system prompt."]
            argv += ["--output-format", "stream-json", "--verbose"]
            argv += ["--permission-prompt-tool", PERMISSION_PROMPT_TOOL]
        argv += ["--session-id", session_id]
        argv += ["--append-system-prompt-file", str(ctx.session_context_path)]
        argv += ["--settings", hook_settings()]
        argv += ["--mcp-config", write_claude_mcp_config(ctx)]
        argv += ["--allowedTools", ",".join((*policy.allowed_tools, *ALP_TOOLS))]
        if policy.disallowed_tools:
            argv += ["--disallowedTools", ",".join(policy.disallowed_tools)]
        if policy.permission_mode:
            argv += ["--permission-mode", policy.permission_mode]
        if policy.model:
            argv += ["--model", policy.model]
        argv += list(ctx.args)
        env = label_env(ctx)
        lookup = {**os.environ, **ctx.config.env}
        return LaunchSpec(
            argv=argv,
            env=env,
            cwd=policy.workspace,
            native_session_id=session_id,
            transcript_path=str(transcript_path(lookup, policy.workspace, session_id)),
        )

    def discover_session(self, run: RunFacts) -> FoundSession | None:
        return None


ADAPTER = ClaudeRuntime()
