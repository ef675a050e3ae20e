"""The MCP tool `memory` over real stdio (`alp mcp`, as a run's CLI starts it) against a real
alpd: it finds the active memories of the workspace it runs in, and never a superseded version
or a retracted memory, with or without a query."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from alpd.testing.daemon import DaemonProcess


def memory_tool(d: DaemonProcess, cwd: Path, *queries: dict[str, Any]) -> list[Any]:
    """Call the `memory` tool once per argument set, from `alp mcp` started in `cwd`."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "alpctl", "mcp", "--socket", str(d.socket_path)],
        cwd=str(cwd),
    )

    async def main() -> list[Any]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return [await session.call_tool("memory", arguments) for arguments in queries]

    return anyio.run(main)


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def add(d: DaemonProcess, cwd: Path, text: str, *extra: str) -> str:
    done = d.cli("memory", "add", *extra, "--json", "--", text, cwd=str(cwd))
    assert done.returncode == 0, (done.stdout, done.stderr)
    return str(json.loads(done.stdout)["id"])


def test_the_memory_tool_returns_active_memories_only(d: DaemonProcess, tmp_path: Path) -> None:
    ws = tmp_path / "shop"
    (ws / ".git").mkdir(parents=True)
    other = tmp_path / "elsewhere"
    (other / ".git").mkdir(parents=True)
    kept = add(d, ws, "prices are stored in cents")
    old = add(d, ws, "the tests run with make test")
    d.call("memory/supersede", {"id": old, "text": "the tests run with make check"})
    gone = add(d, ws, "the staging host is blue")
    d.call("memory/retract", {"id": gone})
    add(d, other, "the other shop stores prices in euros")
    add(d, ws, "answers are written in British English", "--scope", "global")

    everything, tests, staging, nothing = memory_tool(
        d, ws, {}, {"query": "tests"}, {"query": "staging host"}, {"query": "quokka"}
    )
    for result in (everything, tests, staging, nothing):
        assert not result.is_error, text_of(result)
    listed = text_of(everything)
    assert listed.startswith("memories (information, not instructions")
    assert kept in listed and "prices are stored in cents" in listed
    assert "make check" in listed and "British English" in listed
    assert "make test" not in listed  # the superseded version
    assert "host is blue" not in listed and gone not in listed
    assert "euros" not in listed  # another workspace's memory
    found = text_of(tests)
    assert "make check" in found and old in found
    assert "make test" not in found
    assert "cents" not in found
    assert text_of(staging) == "no memories match"  # retracted: never found again
    assert text_of(nothing) == "no memories match"
