"""Compaction-proof context with the real CLIs.

Claude Code: the adapter installs alp's SessionStart hook through ``--settings`` (matcher
``compact``, command ``python -m alpctl hook session-start``). Compaction can be triggered
offline with ``claude -p "/compact" --resume <id>`` (docs/runtimes.md), so the test runs a
headless root under alp, then resumes that very session by hand with the same ``--settings``
value and the run's labels (``ALP_SESSION_CONTEXT``), compacts it, resumes it once more, and
checks that the model request after the compaction carries the thread's work state as the
hook's additional context — in the conversation, since these hand-run resumes get no
``--append-system-prompt-file``.

Codex: no hook is installed (``alpd/runtimes/codex.py``) because the developer instructions
are re-sent with every model request; the test checks exactly that over a run of two requests.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from fixtures_alp import AlpWorld, WorldFactory
from model_server import RecordedRequest

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

HEADING = "work state, not authority"
DECISION = "the audit log is append-only"
COMPACTED = "The conversation was compacted; the thread's work state follows."
HOOK_PREFIX = "SessionStart hook additional context"


def recording_wrapper(folder: Path, real: Path) -> Path:
    """A ``claude`` that records the argv alpd gave it (beside the session context), then
    runs the real one: the test can repeat the adapter's exact ``--settings`` value."""
    folder.mkdir(parents=True, exist_ok=True)
    wrapper = folder / "claude"
    wrapper.write_text(
        "#!/bin/sh\n"
        'printf \'%s\\0\' "$@" > "$(dirname "$ALP_SESSION_CONTEXT")/argv.bin"\n'
        f'exec "{real}" "$@"\n'
    )
    wrapper.chmod(0o755)
    return wrapper


def conversation_text(request: RecordedRequest) -> str:
    """Every message of an Anthropic request (any role, any block), as one string."""
    return json.dumps(request.body.get("messages"), ensure_ascii=False)


def test_claude_code_compaction_reinjects_the_thread_context_through_the_hook(
    make_world: WorldFactory, claude_bin: Path, outside_tmp: Path
) -> None:
    wrapper = recording_wrapper(outside_tmp / "wrapper", claude_bin)
    world: AlpWorld = make_world(f"[runtimes.claude]\ncommand = {json.dumps(str(wrapper))}\n")
    server = world.server

    thread_id, first = world.start_headless(f"USE_BASH: alp context pin decision -- {DECISION}")
    assert world.wait_settled(first)["outcome"] == "completed", world.run_output(first)
    second = world.continue_headless(thread_id, "look at the audit log", runtime="claude")
    assert world.wait_settled(second)["outcome"] == "completed", world.run_output(second)
    (before,) = server.model_requests("anthropic")[2:]
    assert HOOK_PREFIX not in conversation_text(before), "the hook is for compactions only"

    exec_dir = world.exec_dir(second)
    argv = (exec_dir / "argv.bin").read_bytes().decode().split("\0")[:-1]
    settings = argv[argv.index("--settings") + 1]
    hooks = json.loads(settings)["hooks"]["SessionStart"]
    assert [h["matcher"] for h in hooks] == ["compact"]
    assert hooks[0]["hooks"][0]["command"].endswith("-m alpctl hook session-start")
    session_id = world.show(second)["nativeSessionId"]
    assert session_id and argv[argv.index("--session-id") + 1] == session_id

    env = {
        **world.env,
        "ALP_SESSION_CONTEXT": str(exec_dir / "session-context.md"),
        "ALP_EXECUTION_ID": second,
        "ALP_THREAD_ID": thread_id,
    }

    def resume(prompt: str) -> None:
        result = subprocess.run(
            [str(claude_bin), "-p", prompt, "--resume", session_id, "--settings", settings],
            cwd=world.work,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, f"{prompt}: {result.stdout}\n{result.stderr}"

    resume("/compact")
    compacting = server.model_requests("anthropic")[3:]
    assert compacting, "the compaction asks the model for a summary"
    resume("what is the state of the audit log?")
    after = server.model_requests("anthropic")[-1]
    conversation = conversation_text(after)
    assert "what is the state of the audit log?" in conversation
    assert COMPACTED in conversation, conversation[-3000:]
    assert HEADING in conversation and DECISION in conversation and first in conversation
    assert DECISION not in after.system_text, "delivered by the hook, not the system prompt"


def test_codex_gets_the_developer_instructions_with_every_model_request(
    alp_world: AlpWorld,
) -> None:
    world, server = alp_world, alp_world.server
    thread_id, first = world.start_headless(f"USE_BASH: alp context pin decision -- {DECISION}")
    assert world.wait_settled(first)["outcome"] == "completed", world.run_output(first)

    second = world.continue_headless(thread_id, "USE_SHELL: echo one round", agent="coder")
    assert world.wait_settled(second)["outcome"] == "completed", world.run_output(second)
    requests = server.model_requests("openai")
    assert len(requests) == 2, "a shell round is two model requests"
    assert "function_call_output" in json.dumps(requests[1].body["input"])
    for request in requests:
        carrying = [t for t in request.message_texts("developer") if HEADING in t]
        assert len(carrying) == 1, request.message_texts("developer")
        assert DECISION in carrying[0] and first in carrying[0]
