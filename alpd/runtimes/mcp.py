"""How a runtime is told about `alp mcp`, alp's own MCP server for the agent inside a run.

Every claude and codex run alpd launches gets it registered, so the model finds alp's tools
(`pin`, `context`, `search`, `delegate`, `recap`) without any setup. The server is started by the
runtime as its child, so it is a descendant of the run and alpd finds the execution by process
ancestry, exactly as for `alp context pin`: registering it grants nothing the run did not have.
It runs with the same Python as alpd (`python -m alpctl mcp`), on the run's socket; the run's
labels go in its environment because a runtime may start MCP servers with a trimmed one
(Codex does).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass

from alpd.files import write_private_file
from alpd.runtimes.base import LaunchContext, label_env

SERVER_NAME = "alp"
MCP_CONFIG_FILE = "mcp-config.json"


@dataclass(frozen=True, slots=True)
class McpServerSpec:
    command: str
    args: list[str]
    env: dict[str, str]


def alp_mcp_server(ctx: LaunchContext) -> McpServerSpec:
    labels = {k: v for k, v in label_env(ctx).items() if k.startswith("ALP_")}
    return McpServerSpec(
        command=sys.executable,
        args=["-m", "alpctl", "mcp", "--socket", str(ctx.socket_path)],
        env=labels,
    )


def write_claude_mcp_config(ctx: LaunchContext) -> str:
    """The `--mcp-config` file for Claude Code, written 0600 into the execution's directory."""
    spec = alp_mcp_server(ctx)
    server = {
        "type": "stdio",
        "command": spec.command,
        "args": spec.args,
        "env": spec.env,
        # listed with the built-in tools, not deferred behind Claude Code's tool search: a
        # model that never searches would never learn that it can pin
        "alwaysLoad": True,
    }
    document = json.dumps({"mcpServers": {SERVER_NAME: server}}, indent=2) + "\n"
    return str(write_private_file(ctx.exec_dir / MCP_CONFIG_FILE, document))


def codex_mcp_overrides(ctx: LaunchContext, startup_timeout: int = 30) -> list[str]:
    """`-c` overrides registering the server in Codex's `mcp_servers` (values are TOML; a JSON
    string is a valid TOML basic string). Required: a run whose alp tools failed to start
    fails at once instead of working on without a way to pin."""
    spec = alp_mcp_server(ctx)
    key = f"mcp_servers.{SERVER_NAME}"
    env = ", ".join(f"{name} = {json.dumps(value)}" for name, value in sorted(spec.env.items()))
    return [
        "-c",
        f"{key}.command={json.dumps(spec.command)}",
        "-c",
        f"{key}.args={json.dumps(spec.args)}",
        "-c",
        f"{key}.env={{{env}}}",
        "-c",
        f"{key}.startup_timeout_sec={startup_timeout}",
        # `codex exec` sends its first model request without waiting for servers that are
        # slow to start (the MCP SDK's imports take a second or more), unless the server is
        # required: then it waits, and the tools are in the very first request
        "-c",
        f"{key}.required=true",
        # the daemon checks every call (ancestry, delegatesTo), so Codex need not ask: under
        # `approval: never` it would otherwise refuse each call
        "-c",
        f'{key}.default_tools_approval_mode="approve"',
    ]
