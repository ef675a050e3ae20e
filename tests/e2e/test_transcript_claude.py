"""The real `claude` CLI against the scripted model server: what a headless root said reads
as a conversation — `alp thread log` shows the prompt and the assistant's answer, and
`alp execution logs` renders Claude's stream-json the same way (`--raw` keeps it)."""

from __future__ import annotations

import pytest
from fixtures_alp import AlpWorld
from model_server import TextReply

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

PROMPT = "what is six times seven?"
ANSWER = "Six times seven is 42."


def test_thread_log_shows_the_prompt_and_claudes_answer(alp_world: AlpWorld) -> None:
    world = alp_world
    world.server.script(TextReply(ANSWER), api="anthropic")
    thread_id, execution_id = world.start_headless(PROMPT)
    assert world.wait_settled(execution_id)["outcome"] == "completed", world.run_output(
        execution_id
    )
    world.cli("thread", "sync", thread_id)
    log = world.cli("thread", "log", thread_id)
    assert log.returncode == 0, log.stderr
    lines = log.stdout.splitlines()
    assert any("you" in line and PROMPT in line for line in lines), log.stdout
    assert any("assistant" in line and ANSWER in line for line in lines), log.stdout
    assert lines[0].startswith("── root #1 · claude (claude)")
    assert not any(line.startswith("{") for line in lines)
    logs = world.cli("execution", "logs", execution_id)
    assert logs.returncode == 0, logs.stderr
    assert ANSWER in logs.stdout and not any(
        line.startswith("{") for line in logs.stdout.splitlines()
    )
    raw = world.cli("execution", "logs", execution_id, "--raw")
    assert raw.stdout.lstrip().startswith("{") and '"type"' in raw.stdout
