"""`alp mcp` over real stdio, against a real alpd: the tools a model sees, and that a call
from outside a run gets the same named errors as `alp context pin` does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from daemons import BLOCKER, settled, start_headless
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client
from polling import wait_for

from alpd.testing.daemon import DaemonProcess


async def _session_calls(
    socket_path: Path, calls: list[tuple[str, dict[str, Any]]], env: dict[str, str] | None = None
) -> Any:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "alpctl", "mcp", "--socket", str(socket_path)], env=env
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        results = [await session.call_tool(name, arguments) for name, arguments in calls]
        return listed.tools, results


def run_session(
    socket_path: Path, *calls: tuple[str, dict[str, Any]], env: dict[str, str] | None = None
) -> Any:
    async def main() -> Any:
        return await _session_calls(socket_path, list(calls), env)

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
        "remember",
        "memory",
        "approve",
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


def test_approve_answers_claude_codes_permission_prompt_with_a_deny_outside_a_run(
    alpd: DaemonProcess, tmp_path: Path
) -> None:
    """Claude Code reads the text as {behavior, updatedInput | message}; every failure (not a
    run, no daemon) is a deny in that shape, never a tool error that would leave it to them."""
    ask = ("approve", {"tool_name": "Bash", "input": {"command": "rm -rf /"}, "tool_use_id": "t1"})
    tools, (outside,) = run_session(alpd.socket_path, ask)
    schema = next(t for t in tools if t.name == "approve").input_schema
    assert schema["properties"]["input"]["anyOf"][0] == {"type": "object"}
    assert schema["required"] == ["tool_name"]
    assert not outside.is_error
    answer = json.loads(text_of(outside))
    assert answer["behavior"] == "deny" and "PIN_OUTSIDE_EXECUTION" in answer["message"]
    _, (lost,) = run_session(tmp_path / "no.sock", ask)
    answer = json.loads(text_of(lost))
    assert answer["behavior"] == "deny" and "alpd is not reachable" in answer["message"]


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


def strict_json(line: bytes) -> Any:
    def refuse(name: str) -> Any:
        raise AssertionError(f"alp mcp wrote {name}, which is not JSON")

    return json.loads(line.decode("utf-8"), parse_constant=refuse)


def test_hostile_messages_get_errors_and_alp_mcp_keeps_its_tools(alpd: DaemonProcess) -> None:
    """What the MCP Inspector CLI and hand-made clients sent, each of which ended `alp mcp`
    (and with it the run's tools) or made it write invalid JSON."""
    hostile = [
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":["pin"]}}',
        b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}',
        b'{"jsonrpc":"2.0","id":1e400,"method":"ping"}',
        b'{"jsonrpc":"2.0","id":2,"method":"ping","params":' + b"[" * 50_000 + b"]" * 50_000 + b"}",
        b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"pin",'
        b'"arguments":{"kind":"decision","text":"\\udc80"}}}',
    ]
    last = b'{"jsonrpc":"2.0","id":4,"method":"tools/list"}'
    done = subprocess.run(
        [sys.executable, "-m", "alpctl", "mcp", "--socket", str(alpd.socket_path)],
        input=b"\n".join([*hostile, last]) + b"\n",
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode()
    replies = [strict_json(line) for line in done.stdout.splitlines()]
    assert [(r["id"], r.get("error", {}).get("code")) for r in replies] == [
        (1, -32602),
        (None, -32600),
        (None, -32600),
        (None, -32700),
        (3, None),
        (4, None),
    ]
    assert replies[4]["result"]["isError"] and "not valid Unicode" in str(replies[4]["result"])
    assert len(replies[5]["result"]["tools"]) == 11


def test_tool_schemas_describe_and_bound_every_argument(alpd: DaemonProcess) -> None:
    tools, (extra,) = run_session(alpd.socket_path, ("ps", {"all": False, "verbose": True}))
    by_name = {tool.name: tool for tool in tools}
    for tool in tools:
        schema = tool.input_schema
        assert schema["additionalProperties"] is False, tool.name
        assert all(prop.get("description") for prop in schema["properties"].values()), tool.name
        assert tool.annotations is not None and tool.annotations.title, tool.name
    read_only = {name for name, tool in by_name.items() if tool.annotations.read_only_hint}
    assert read_only == {"context", "search", "ps", "inbox", "recap", "memory"}
    assert by_name["delegate"].annotations.destructive_hint is True
    assert by_name["pin"].annotations.destructive_hint is False
    pin_text = by_name["pin"].input_schema["properties"]["text"]
    assert (pin_text["maxLength"], pin_text["x-maxBytes"]) == (4096, 4096) and pin_text["pattern"]
    summary = by_name["handoff"].input_schema["properties"]["summary"]
    assert summary["x-maxBytes"] == 4096
    limit = by_name["search"].input_schema["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"]) == (1, 200)
    assert extra.is_error and "unknown argument `verbose`" in text_of(extra)


def test_a_pin_of_more_than_one_line_is_refused_before_it_reaches_the_daemon(
    alpd: DaemonProcess,
) -> None:
    _, (two_lines, too_long, big_limit) = run_session(
        alpd.socket_path,
        ("pin", {"kind": "decision", "text": "use sqlite\nbecause it is there"}),
        ("pin", {"kind": "decision", "text": "é" * 2049}),
        ("search", {"query": "x", "limit": 201}),
    )
    assert two_lines.is_error and "one line" in text_of(two_lines)
    assert "PIN_OUTSIDE_EXECUTION" not in text_of(two_lines)
    assert too_long.is_error and "at most 4096 bytes" in text_of(too_long)
    assert big_limit.is_error and "an integer from 1 to 200" in text_of(big_limit)


def test_a_resolve_must_name_an_open_item(alpd: DaemonProcess, tmp_path: Path) -> None:
    thread = alpd.call("thread/create", {"title": "checkout", "cwd": str(tmp_path)})
    assert isinstance(thread, dict)
    pin = [sys.executable, "-m", "alpctl", "context", "pin", "open-item", "--", "does it need 3DS"]
    settled(alpd, start_headless(alpd, thread["id"], tmp_path, pin)["id"])
    context = alpd.call("thread/context", {"threadId": thread["id"]})
    assert isinstance(context, dict)
    (item,) = context["snapshot"]["openItems"]
    env = {**get_default_environment(), "ALP_THREAD_ID": thread["id"]}
    _, (unknown, by_text, by_id) = run_session(
        alpd.socket_path,
        ("pin", {"kind": "resolve", "text": "never opened"}),
        ("pin", {"kind": "resolve", "text": "does it need 3DS"}),
        ("pin", {"kind": "resolve", "text": item["id"]}),
        env=env,
    )
    assert unknown.is_error and "no open item has the id or text 'never opened'" in text_of(unknown)
    assert item["id"] in text_of(unknown) and "does it need 3DS" in text_of(unknown)
    # Named rightly, the resolve reaches the daemon (which refuses a caller outside a run).
    for named in (by_text, by_id):
        assert named.is_error and "PIN_OUTSIDE_EXECUTION" in text_of(named)
