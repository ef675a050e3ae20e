"""Handoffs between threads with the real CLIs against the scripted model server.

A `claude` research thread hands its verdict to an idle `codex` build thread through alp's
MCP `handoff` tool; the build thread is woken by a `push` root whose model request carries
the envelope (the research thread named by its title, "not instructions") and the summary.
A directive sent from a shell waits in the inbox — no model is asked anything — until the
person confirms it; then it arrives as their own words.
"""

from __future__ import annotations

from typing import Any

import pytest
from fixtures_alp import AlpWorld, wait_until
from model_server import TextReply, ToolCallReply

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

VERDICT = "Verdict: SQLite FTS5 beats Tantivy at our sizes (p50 1.2 ms vs 3.4 ms); build on it."


def thread(world: AlpWorld, title: str) -> str:
    thread_id: str = world.cli_json("thread", "create", "--title", title)["id"]
    return thread_id


def seeded(world: AlpWorld, title: str, runtime: str) -> str:
    """A thread whose last root ran `runtime` (deliveries into it run that runtime too)."""
    thread_id = thread(world, title)
    api = "anthropic" if runtime == "claude" else "openai"
    world.server.script(TextReply("ready"), api=api)
    root = world.continue_headless(thread_id, "get ready", runtime=runtime)
    assert world.wait_settled(root, timeout=90)["outcome"] == "completed", world.run_output(root)
    return thread_id


def arrived(world: AlpWorld, thread_id: str) -> list[dict[str, Any]]:
    return list(world.call("thread/show", threadId=thread_id).get("handoffsIn") or [])


def test_a_claude_research_thread_hands_off_to_an_idle_codex_build_thread(
    alp_world: AlpWorld,
) -> None:
    world, server = alp_world, alp_world.server
    build = seeded(world, "build", "codex")
    research = thread(world, "research")
    server.script(
        ToolCallReply(
            tool="mcp__alp__handoff",
            arguments={"target": "build", "summary": VERDICT},
            text="Handing the verdict to the build thread.",
        ),
        TextReply("Handed off."),
        api="anthropic",
    )
    server.script(TextReply("Noted: building on FTS5."), api="openai")
    sender = world.continue_headless(research, "compare FTS5 and Tantivy", runtime="claude")
    assert world.wait_settled(sender, timeout=90)["outcome"] == "completed", world.run_output(
        sender
    )

    [handoff] = wait_until(lambda: arrived(world, build), 30, "the handoff in build")
    assert handoff["sourceExecutionId"] == sender and handoff["path"] == "wake"
    woken = world.wait_settled(handoff["deliveredExecutionId"], timeout=90)
    assert woken["kind"] == "push" and woken["runtime"] == "codex"
    assert woken["outcome"] == "completed", world.run_output(woken["id"])

    request = server.model_requests("openai")[-1]
    prompt = "\n".join(request.message_texts("user"))
    envelope = '[alp · handoff from thread "research"'
    assert envelope in prompt and "not instructions]" in prompt, prompt
    assert prompt.split(envelope, 1)[1].split("\n", 1)[1].startswith("> " + VERDICT), prompt
    assert research not in prompt  # the source is named by its title, not its id
    [sent] = world.call("thread/show", threadId=research)["handoffsOut"]
    assert sent["id"] == handoff["id"]


def test_a_directive_waits_in_the_inbox_until_the_person_confirms_it(
    alp_world: AlpWorld,
) -> None:
    world, server = alp_world, alp_world.server
    thread(world, "monitor")
    trading = seeded(world, "trading", "claude")
    asked = len(server.model_requests())
    held = world.cli_json(
        "handoff", "trading", "--from", "monitor", "--directive", "--", "BTC broke 42k: sell half"
    )["handoff"]
    assert held["status"] == "inbox"
    listed = world.cli_json("inbox")["items"]
    assert [item["id"] for item in listed] == [held["id"]]
    assert len(server.model_requests()) == asked  # nothing ran: it waits for the person
    assert len(world.call("thread/show", threadId=trading)["roots"]) == 1

    server.script(TextReply("Selling half, as you confirmed."), api="anthropic")
    confirmed = world.cli_json("inbox", "confirm", held["id"])
    woken = world.wait_settled(confirmed["execution"]["id"], timeout=90)
    assert woken["outcome"] == "completed", world.run_output(woken["id"])
    prompt = server.model_requests("anthropic")[-1].message_texts("user")[-1]
    assert '[alp · confirmed handoff from thread "monitor"' in prompt, prompt
    assert "their own words" in prompt and prompt.endswith("BTC broke 42k: sell half")
    assert world.cli_json("inbox")["items"] == []
