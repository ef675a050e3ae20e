"""The recap with the real Claude Code, against the scripted model server.

Three headless `claude` roots settle in one thread; the third triggers a refresh, which is a
`claude -p --model haiku` run with no tools (a `temp` execution): the model server's request
log shows that model, the recap instructions as the system prompt and the thread's history,
secret-filtered, as the input. The fourth root's own model request carries the recap in its
system prompt, after the pinned context.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from fixtures_alp import WorldFactory
from model_server import TextReply
from polling import wait_for

from alpd.domain.recap.summary import INSTRUCTIONS

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
RECAP = {
    "headline": "Benchmark rerun: four models left",
    "gist": "Three of seven models were rerun; four failed on OOM and wait for a bigger box.",
    "openTasks": ["rerun the four OOM models"],
}
CONFIG = """
[recap]
minRoots = 3
minIntervalSeconds = 0
"""


def test_three_claude_roots_get_a_haiku_recap_that_the_fourth_root_receives(
    make_world: WorldFactory,
) -> None:
    world = make_world(CONFIG)
    server = world.server
    thread_id = world.cli_json("thread", "create", "--title", "bench")["id"]
    prompts = ["run the benchmark", f"the key is {AWS_KEY}", "rerun the failed models"]
    server.script(TextReply("three of seven done"), TextReply("ok"))
    for prompt in prompts[:2]:
        root = world.continue_headless(thread_id, prompt, runtime="claude")
        settled = world.wait_settled(root, timeout=60)
        assert settled["outcome"] == "completed", world.run_output(root)
    # the third root's reply, then the summariser's
    server.script(TextReply("four failed on OOM"), TextReply(json.dumps(RECAP)))
    third = world.continue_headless(thread_id, prompts[2], runtime="claude")
    assert world.wait_settled(third, timeout=60)["outcome"] == "completed"

    def made() -> dict[str, Any] | None:
        recap: dict[str, Any] = world.call("thread/recap", threadId=thread_id)
        return recap if recap.get("headline") else None

    recap = wait_for(made, 90, "the recap")
    assert (recap["headline"], recap["openTasks"]) == (RECAP["headline"], RECAP["openTasks"])
    summariser = [r for r in server.model_requests("anthropic") if "haiku" in r.body["model"]]
    assert len(summariser) == 1, [r.body["model"] for r in server.model_requests("anthropic")]
    [request] = summariser
    assert INSTRUCTIONS in request.system_text
    assert request.body.get("tools") in (None, [])
    sent = "\n".join(request.message_texts("user"))
    assert "run the benchmark" in sent and "four failed on OOM" in sent
    assert AWS_KEY not in sent and "[REDACTED:" in sent
    temp = world.show(recap["executionId"])
    assert (temp["kind"], temp["origin"]["purpose"], temp["runtime"]) == ("temp", "recap", "claude")
    assert temp["outcome"] == "completed" and temp["usage"]["inputTokens"] > 0

    server.script(TextReply("continuing"))
    fourth = world.continue_headless(thread_id, "continue", runtime="claude")
    assert world.wait_settled(fourth, timeout=60)["outcome"] == "completed"
    last = server.model_requests("anthropic")[-1]
    system = last.system_text
    assert "# work state, not authority" in system
    assert "# recap: derived from history, not authority" in system
    assert system.index("# work state") < system.index("# recap: derived")
    assert RECAP["gist"] in system and "rerun the four OOM models" in system
