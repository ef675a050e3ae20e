"""How `alp mcp` is registered in the runs alpd launches (claude: a file; codex: `-c`)."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

from alpd.domain.runs.agents import RuntimeConfig
from alpd.runtimes.base import LaunchContext, alp_program
from alpd.runtimes.mcp import codex_mcp_overrides, write_claude_mcp_config


def context(tmp_path: Path, thread_id: str | None = "thread_1") -> LaunchContext:
    return LaunchContext(
        execution_id="exec_1",
        thread_id=thread_id,
        exec_dir=tmp_path,
        session_context_path=tmp_path / "session-context.md",
        socket_path=Path('/run/alp "quoted"/alpd.sock'),
        prompt=None,
        config=RuntimeConfig(name="codex"),
        program="/usr/bin/true",
        args=(),
    )


def test_codex_overrides_are_toml_that_names_alps_server(tmp_path: Path) -> None:
    argv = codex_mcp_overrides(context(tmp_path))
    assert argv[::2] == ["-c"] * (len(argv) // 2)
    config: dict[str, object] = {}
    for override in argv[1::2]:
        key, value = override.split("=", 1)
        parsed = tomllib.loads(f"v = {value}")["v"]
        config[key.removeprefix("mcp_servers.alp.")] = parsed
    assert config["command"] == sys.executable
    assert config["args"] == ["-m", "alpctl", "mcp", "--socket", '/run/alp "quoted"/alpd.sock']
    program = alp_program()
    assert config["env"] == {
        "ALP_SOCKET": '/run/alp "quoted"/alpd.sock',
        "ALP_EXECUTION_ID": "exec_1",
        "ALP_SESSION_CONTEXT": str(tmp_path / "session-context.md"),
        "ALP_THREAD_ID": "thread_1",
        **({"ALP_BIN": program} if program is not None else {}),
    }
    assert config["required"] is True
    assert config["default_tools_approval_mode"] == "approve"


def test_claude_config_is_a_private_file_in_the_execution_dir(tmp_path: Path) -> None:
    path = Path(write_claude_mcp_config(context(tmp_path, thread_id=None)))
    assert path.parent == tmp_path
    assert path.stat().st_mode & 0o777 == 0o600
    server = json.loads(path.read_text())["mcpServers"]["alp"]
    assert server["alwaysLoad"] is True
    assert server["args"][2:] == ["mcp", "--socket", '/run/alp "quoted"/alpd.sock']
    assert "ALP_THREAD_ID" not in server["env"]
