"""`alp mcp` over real stdio, against a real alpd: the tools a model sees, and that a call
from outside a run gets the same named errors as `alp context pin` does."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
from daemons import BLOCKER
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from polling import wait_for

from alpd.testing.daemon import DaemonProcess


async def _session_calls(socket_path: Path, calls: list[tuple[str, dict[str, Any]]]) -> Any:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "alpctl", "mcp", "--socket", str(socket_path)]
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        results = [await session.call_tool(name, arguments) for name, arguments in calls]
        return listed.tools, results


def run_session(socket_path: Path, *calls: tuple[str, dict[str, Any]]) -> Any:
    async def main() -> Any:
        return await _session_calls(socket_path, list(calls))

    return anyio.run(main)


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def test_alp_mcp_lists_alps_tools_with_descriptions_for_a_model(alpd: DaemonProcess) -> None:
    tools, _ = run_session(alpd.socket_path)
    by_name = {tool.name: tool for tool in tools}
    assert set(by_name) == {
        "pin",
        "context",
        "search",
        "ps",
        "delegate",
        "handoff",
        "inbox",
        "recap",
    }
    pin = by_name["pin"]
    assert "ONLY record of your work the next run" in (pin.description or "")
    kinds = pin.input_schema["properties"]["kind"]["enum"]
    assert kinds == ["objective", "decision", "constraint", "open-item", "next-action", "resolve"]


def test_a_pin_from_outside_a_run_gets_the_named_error(alpd: DaemonProcess) -> None:
    _, (pin, delegate, handoff, inbox) = run_session(
        alpd.socket_path,
        ("pin", {"kind": "decision", "text": "from nowhere"}),
        ("delegate", {"agent": "coder", "task": "anything"}),
        ("handoff", {"target": "build", "summary": "from nowhere"}),
        ("inbox", {}),
    )
    assert pin.is_error and "PIN_OUTSIDE_EXECUTION" in text_of(pin)
    assert delegate.is_error and "PIN_OUTSIDE_EXECUTION" in text_of(delegate)
    assert handoff.is_error and "PIN_OUTSIDE_EXECUTION" in text_of(handoff)
    assert not inbox.is_error and text_of(inbox) == "your inbox is empty"
    cli = alpd.cli("context", "pin", "decision", "--", "from nowhere")
    assert cli.returncode == 1 and "PIN_OUTSIDE_EXECUTION" in cli.stderr


def test_arguments_that_do_not_fit_are_a_tool_error_the_model_can_read(
    alpd: DaemonProcess,
) -> None:
    _, (wish, missing) = run_session(
        alpd.socket_path,
        ("pin", {"kind": "wish", "text": "x"}),
        ("search", {"limit": 5}),
    )
    assert wish.is_error and "argument `kind` must be" in text_of(wish)
    assert '"resolve"' in text_of(wish)
    assert missing.is_error and "missing argument `query`" in text_of(missing)


def test_search_and_an_unreachable_daemon_answer_as_tool_results(
    alpd: DaemonProcess, tmp_path: Path
) -> None:
    alpd.call("thread/create", {"title": "the quokka migration", "cwd": str(tmp_path)})
    wait_for(  # a thread's title is indexed for search after its creation is answered
        lambda: alpd.call("history/search", {"query": "quokka"})["hits"],  # type: ignore[index]
        what="the title in the search index",
    )
    _, (found,) = run_session(alpd.socket_path, ("search", {"query": "quokka"}))
    assert not found.is_error and "quokka" in text_of(found)
    _, (lost,) = run_session(tmp_path / "no.sock", ("search", {"query": "quokka"}))
    assert lost.is_error and "alpd is not reachable" in text_of(lost)


def test_ps_shows_a_running_root_with_its_thread(alpd: DaemonProcess, tmp_path: Path) -> None:
    thread = alpd.call("thread/create", {"title": "the long migration", "cwd": str(tmp_path)})
    assert isinstance(thread, dict)
    alpd.call(
        "thread/continue",
        {"threadId": thread["id"], "runtime": "command", "headless": True, "args": BLOCKER,
         "cwd": str(tmp_path)},
    )  # fmt: skip
    try:
        _, (ps,) = run_session(alpd.socket_path, ("ps", {}))
    finally:
        (tmp_path / "release").touch()
    assert not ps.is_error
    assert "RUNNING 1" in text_of(ps) and "the long migration" in text_of(ps)
