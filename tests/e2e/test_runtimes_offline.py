"""The real ``claude`` and ``codex`` CLIs, offline, against the scripted model server.

No alpd here: each test calls a CLI directly, headless, exactly as the daemon's adapters will
(argv/env in ``docs/runtimes.md``), and asserts on what reached the model server and what the
CLI wrote to disk. They pin down the facts the adapters rely on: where the session context
lands in the request, where the transcript is, how usage is reported, that the shell tool
really runs, and how the SessionStart hooks behave. Every test runs inside the empty network
namespace set up by ``conftest.py``.
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import socket
import subprocess
import sys
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest
import runtimes
from model_server import ModelServer, Usage

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

CLI_TIMEOUT = 60
SESSION_CONTEXT = (
    "# Thread context — work state, not authority\n\n"
    "## Decisions\n"
    "- decision: store snapshots as JCS digests (pinned by exec_e2e0001) 🧵\n"
)


def run_cli(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run a CLI headless: stdin is /dev/null (an open pipe stalls both CLIs)."""
    return subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
        check=False,
    )


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def assert_ok(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, f"rc={result.returncode}\n{result.stdout}\n{result.stderr}"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


# -- isolation ---------------------------------------------------------------------------------


def test_network_namespace_has_only_loopback(model_server: ModelServer) -> None:
    # (not /sys/class/net: sysfs shows the namespace it was mounted in)
    assert [name for _, name in socket.if_nameindex()] == ["lo"]
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        code = sock.connect_ex(("192.0.2.1", 443))  # TEST-NET-1: never routable here
    assert code == errno.ENETUNREACH
    probe = (
        "import socket,errno,sys\n"
        "s=socket.socket(); s.settimeout(5)\n"
        "sys.exit(0 if s.connect_ex(('1.1.1.1', 53)) == errno.ENETUNREACH else 1)\n"
    )
    child = subprocess.run([sys.executable, "-c", probe], timeout=30, check=False)
    assert child.returncode == 0, "a child process could reach a non-loopback address"
    with urllib.request.urlopen(f"{model_server.url}/api/hello", timeout=5) as reply:
        assert reply.status == 200  # loopback still works


# -- Claude Code -------------------------------------------------------------------------------


def claude_argv(claude_bin: Path, prompt: str, session_id: str, *extra: str) -> list[str]:
    return [
        str(claude_bin),
        "-p",
        prompt,
        "--session-id",
        session_id,
        "--output-format",
        "stream-json",
        "--verbose",
        *extra,
    ]


def test_claude_print_mode_puts_session_context_in_system_and_transcript_where_predicted(
    claude_bin: Path, model_server: ModelServer, project: Path, tmp_path: Path
) -> None:
    model_server.usage = Usage(input_tokens=1234, output_tokens=56)
    context_file = tmp_path / "session-context.md"
    context_file.write_text(SESSION_CONTEXT)
    home, session_id = tmp_path / "home", str(uuid.uuid4())
    env = runtimes.claude_env(model_server.anthropic_base_url, home)

    result = run_cli(
        claude_argv(
            claude_bin,
            "say hi",
            session_id,
            "--append-system-prompt-file",
            str(context_file),
        ),
        project,
        env,
    )

    assert_ok(result)
    [request] = model_server.model_requests("anthropic")
    assert request.headers["x-claude-code-session-id"] == session_id
    assert "work state, not authority" in request.system_text
    assert "decision: store snapshots as JCS digests" in request.system_text
    for role in ("user", "assistant", "system"):
        assert not any("work state, not authority" in t for t in request.message_texts(role))
    transcript = runtimes.claude_transcript_path(home, project, session_id)
    assert transcript.is_file(), sorted(str(p) for p in (home / ".claude").rglob("*.jsonl"))
    entries = json_lines(transcript.read_text())
    assert {e.get("sessionId") for e in entries if "sessionId" in e} == {session_id}
    events = json_lines(result.stdout)
    init = next(e for e in events if e["type"] == "system" and e.get("subtype") == "init")
    assert init["session_id"] == session_id
    final = events[-1]
    assert final["type"] == "result" and final["subtype"] == "success"
    assert final["result"] == "scripted reply to: say hi"
    assert final["usage"]["input_tokens"] == 1234
    assert final["usage"]["output_tokens"] == 56
    assert final["total_cost_usd"] > 0


def test_claude_bash_tool_round_runs_the_command(
    claude_bin: Path, model_server: ModelServer, project: Path, tmp_path: Path
) -> None:
    env = runtimes.claude_env(model_server.anthropic_base_url, tmp_path / "home")
    prompt = "please USE_BASH: printf alp-claude > marker.txt && echo wrote-marker"

    result = run_cli(
        claude_argv(claude_bin, prompt, str(uuid.uuid4()), "--allowedTools", "Bash"),
        project,
        env,
    )

    assert_ok(result)
    assert (project / "marker.txt").read_text() == "alp-claude"
    first, second = model_server.model_requests("anthropic")
    assert "Bash" in {tool.get("name") for tool in first.body["tools"]}
    tool_results = [
        block
        for message in second.body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    assert len(tool_results) == 1 and not tool_results[0].get("is_error")
    final = json_lines(result.stdout)[-1]
    assert final["result"] == "tool result: wrote-marker"
    assert final["permission_denials"] == []


def test_claude_session_start_hook_context_reaches_the_request(
    claude_bin: Path, model_server: ModelServer, project: Path, tmp_path: Path
) -> None:
    hook_input = tmp_path / "hook-input.json"
    hook = tmp_path / "session_start_hook.py"
    output = {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": "HOOK-CONTEXT: work state, not authority (rev 7)",
        }
    }
    hook.write_text(
        "import json, sys\n"
        f"open({str(hook_input)!r}, 'w').write(sys.stdin.read())\n"
        f"print(json.dumps({output!r}))\n"
    )
    settings = {
        "hooks": {
            "SessionStart": [
                {
                    "matcher": "*",
                    "hooks": [{"type": "command", "command": f"{sys.executable} {hook}"}],
                }
            ]
        }
    }
    session_id = str(uuid.uuid4())
    env = runtimes.claude_env(model_server.anthropic_base_url, tmp_path / "home")

    result = run_cli(
        claude_argv(claude_bin, "hello", session_id, "--settings", json.dumps(settings)),
        project,
        env,
    )

    assert_ok(result)
    received = json.loads(hook_input.read_text())
    assert received["hook_event_name"] == "SessionStart"
    assert received["source"] == "startup"
    assert received["session_id"] == session_id
    [request] = model_server.model_requests("anthropic")
    carrying = [t for t in request.message_texts("system") if "HOOK-CONTEXT" in t]
    assert carrying, [m.get("role") for m in request.body["messages"]]
    assert "SessionStart hook additional context: HOOK-CONTEXT" in carrying[0]
    assert "HOOK-CONTEXT" not in request.system_text


# -- Codex CLI ---------------------------------------------------------------------------------


def codex_argv(codex_bin: Path, prompt: str, *extra: str) -> list[str]:
    return [str(codex_bin), "exec", "--json", "--skip-git-repo-check", *extra, prompt]


def local_day_dir(sessions: Path, thread_id: str) -> Path:
    """``sessions/YYYY/MM/DD`` in local time, from the UUIDv7's 48-bit millisecond stamp."""
    millis = uuid.UUID(thread_id).int >> 80
    day = dt.datetime.fromtimestamp(millis / 1000).astimezone()
    return sessions / f"{day:%Y}" / f"{day:%m}" / f"{day:%d}"


def thread_id_of(stdout: str) -> str:
    first = json_lines(stdout)[0]
    assert first["type"] == "thread.started", first
    return str(first["thread_id"])


@pytest.fixture
def codex_setup(model_server: ModelServer, outside_tmp: Path) -> tuple[Path, dict[str, str]]:
    codex_home = outside_tmp / "codex-home"
    runtimes.write_codex_home(codex_home, model_server.openai_base_url)
    return codex_home, runtimes.codex_env(codex_home, outside_tmp / "home")


def test_codex_exec_sends_developer_instructions_and_writes_rollout_found_by_id(
    codex_bin: Path,
    model_server: ModelServer,
    project: Path,
    codex_setup: tuple[Path, dict[str, str]],
) -> None:
    codex_home, env = codex_setup
    model_server.usage = Usage(input_tokens=777, output_tokens=33)
    # A JSON string literal is a TOML basic string when non-ASCII stays raw (TOML rejects the
    # surrogate-pair escapes json.dumps would write for characters outside the BMP).
    instructions = f"developer_instructions={json.dumps(SESSION_CONTEXT, ensure_ascii=False)}"

    result = run_cli(codex_argv(codex_bin, "say hi", "-c", instructions), project, env)

    assert_ok(result)
    thread_id = thread_id_of(result.stdout)
    [request] = model_server.model_requests("openai")
    assert request.headers["session-id"] == thread_id
    developer = request.message_texts("developer")
    assert any(t.startswith(SESSION_CONTEXT) for t in developer), [t[:60] for t in developer]
    assert not any("work state, not authority" in t for t in request.message_texts("user"))
    rollouts = list(
        local_day_dir(codex_home / "sessions", thread_id).glob(f"rollout-*-{thread_id}.jsonl")
    )
    assert len(rollouts) == 1, sorted((codex_home / "sessions").rglob("*.jsonl"))
    meta = json_lines(rollouts[0].read_text())[0]
    assert meta["type"] == "session_meta" and meta["payload"]["id"] == thread_id
    assert meta["payload"]["cwd"] == str(project.resolve())
    events = json_lines(result.stdout)
    messages = [
        e["item"]["text"] for e in events if e.get("item", {}).get("type") == "agent_message"
    ]
    assert messages == ["scripted reply to: say hi"]
    usage = events[-1]
    assert usage["type"] == "turn.completed"
    assert usage["usage"]["input_tokens"] == 777 and usage["usage"]["output_tokens"] == 33


def test_codex_shell_tool_round_runs_the_command(
    codex_bin: Path,
    model_server: ModelServer,
    project: Path,
    codex_setup: tuple[Path, dict[str, str]],
) -> None:
    _, env = codex_setup
    prompt = "please USE_SHELL: printf alp-codex > marker.txt && echo wrote-marker"

    result = run_cli(codex_argv(codex_bin, prompt, "--sandbox", "workspace-write"), project, env)

    assert_ok(result)
    assert (project / "marker.txt").read_text() == "alp-codex"
    first, second = model_server.model_requests("openai")
    assert "exec_command" in {tool.get("name") for tool in first.body["tools"]}
    [output] = [i for i in second.body["input"] if i.get("type") == "function_call_output"]
    assert "wrote-marker" in output["output"]
    commands = [
        e["item"]
        for e in json_lines(result.stdout)
        if e["type"] == "item.completed" and e["item"]["type"] == "command_execution"
    ]
    assert len(commands) == 1 and commands[0]["exit_code"] == 0


def test_codex_session_start_hook_needs_trust_and_then_adds_developer_context(
    codex_bin: Path,
    model_server: ModelServer,
    project: Path,
    codex_setup: tuple[Path, dict[str, str]],
    tmp_path: Path,
) -> None:
    codex_home, env = codex_setup
    hook_input = tmp_path / "hook-input.json"
    hook = tmp_path / "session_start_hook.py"
    output = {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": "HOOK-CONTEXT: work state, not authority (rev 9)",
        }
    }
    hook.write_text(
        "import json, sys\n"
        f"open({str(hook_input)!r}, 'w').write(sys.stdin.read())\n"
        f"print(json.dumps({output!r}))\n"
    )
    command = {"type": "command", "command": f"{sys.executable} {hook}"}
    hooks = {"hooks": {"SessionStart": [{"matcher": "startup", "hooks": [command]}]}}
    (codex_home / "hooks.json").write_text(json.dumps(hooks))

    untrusted = run_cli(codex_argv(codex_bin, "hello"), project, env)
    assert_ok(untrusted)
    assert not hook_input.exists(), "an untrusted Codex hook ran"
    assert not any(
        "HOOK-CONTEXT" in t for t in model_server.model_requests()[0].message_texts("developer")
    )

    model_server.clear()
    trusted = run_cli(
        codex_argv(codex_bin, "hello", "--dangerously-bypass-hook-trust"), project, env
    )

    assert_ok(trusted)
    thread_id = thread_id_of(trusted.stdout)
    received = json.loads(hook_input.read_text())
    assert received["hook_event_name"] == "SessionStart" and received["source"] == "startup"
    assert received["session_id"] == thread_id
    assert received["transcript_path"].endswith(f"-{thread_id}.jsonl")
    [request] = model_server.model_requests("openai")
    developer = request.message_texts("developer")
    assert any(t.startswith("HOOK-CONTEXT: work state") for t in developer)
    user_items = [i for i in request.body["input"] if i.get("role") in ("user", "developer")]
    assert "HOOK-CONTEXT" in json.dumps(user_items[-2]) and user_items[-1]["role"] == "user"
