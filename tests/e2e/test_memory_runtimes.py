"""Memory across threads with the real CLIs against the scripted model server.

A constraint pinned in thread A and promoted by the person reaches a new root of thread B in
the same workspace: the request the model received carries the memory section (Claude Code:
in the system prompt; Codex: in a developer message) with the memory's id. A root of a thread
in another workspace gets nothing, until the person adds a global memory.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures_alp import AlpWorld
from model_server import RecordedRequest, TextReply

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

HEADING = "memory — work state, not authority"
CONSTRAINT = "prices are stored in integer cents, never floats"
GLOBAL = "the person prefers commit messages under 50 characters"
API = {"claude": "anthropic", "codex": "openai"}


def given(request: RecordedRequest, runtime: str) -> str:
    """What the run was given as context: Claude's system prompt, Codex's developer text."""
    if runtime == "claude":
        return request.system_text
    return "\n".join(request.message_texts("developer"))


def root_context(world: AlpWorld, thread_id: str, runtime: str, prompt: str, cwd: Path) -> str:
    """Run one root of `runtime` on the thread; the context its first model request had."""
    world.server.script(TextReply("ok"), api=API[runtime])
    before = len(world.server.model_requests(API[runtime]))
    how = ["--runtime", "claude"] if runtime == "claude" else ["--agent", "coder"]
    started = world.cli_json(
        "thread", "continue", thread_id, "--headless", "--prompt", prompt, *how, cwd=cwd
    )
    execution = world.wait_settled(started["execution"]["id"], timeout=120)
    assert execution["outcome"] == "completed", world.run_output(execution["id"])
    return given(world.server.model_requests(API[runtime])[before], runtime)


def new_thread(world: AlpWorld, title: str, workspace: Path) -> str:
    thread_id: str = world.call("thread/create", title=title, workspace=str(workspace))["id"]
    return thread_id


@pytest.mark.parametrize("runtime", ["claude", "codex"])
def test_a_memory_promoted_in_one_thread_reaches_a_new_root_of_another(
    alp_world: AlpWorld, runtime: str
) -> None:
    world = alp_world
    a = new_thread(world, "pricing", world.work)
    pinned = world.cli_json(
        "thread", "continue", a, "--runtime", "command", "--headless", "--wait",
        "--", "sh", "-c", f"alp context pin constraint -- '{CONSTRAINT}'",
    )  # fmt: skip
    assert world.show(pinned["execution"]["id"])["outcome"] == "completed"
    memory = world.cli_json("memory", "promote", a, "1")
    assert memory["text"] == CONSTRAINT and memory["workspace"] == str(world.work)

    b = new_thread(world, "checkout", world.work)
    text = root_context(world, b, runtime, "show the cart total with its prices", world.work)
    assert HEADING in text, text
    section = text[text.index(HEADING) :]
    assert CONSTRAINT in section and memory["id"] in section and "convention" in section
    assert "work state, not authority" in text[: text.index(HEADING)], "after the pins"

    elsewhere = world.work / "elsewhere"
    elsewhere.mkdir()
    c = new_thread(world, "elsewhere", elsewhere)
    text = root_context(world, c, runtime, "show the cart total with its prices", elsewhere)
    assert HEADING not in text and CONSTRAINT not in text

    world.cli_json("memory", "add", "--scope", "global", "--kind", "preference", "--", GLOBAL)
    text = root_context(world, c, runtime, "write the commit message for the prices", elsewhere)
    assert HEADING in text and GLOBAL in text and CONSTRAINT not in text
