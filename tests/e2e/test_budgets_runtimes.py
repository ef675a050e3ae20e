"""Budgets with the real Claude Code and Codex CLIs (issue 27, point 4; docs/budgets.md):
the scripted model server keeps asking for a shell command, each reply with a large usage, so
the run would spend for ever; the thread's hard budget (tokens for Claude Code, USD from the
config's price table for Codex) ends the root `budget-exceeded` within a few replies of the
limit, and the next root is refused (BUDGET_EXCEEDED)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from fixtures_alp import AlpWorld, WorldFactory
from model_server import RateWindow, TextReply, ToolCallReply, Usage

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

SPENDER = """
[agents.spender]
runtime = "claude"
allowedTools = ["Bash"]

[runtimes.codex]
prices = { "gpt-scripted" = { input = 2.0, output = 10.0 } }
"""
#: replies the server would give: far more than any budget here lets through
REPLIES = 200
USAGE = Usage(input_tokens=50_000, output_tokens=1_000)  # 51,000 tokens; 0.11 USD on Codex


def spend_until_stopped(world: AlpWorld, thread_id: str, execution_id: str) -> dict[str, Any]:
    settled = world.wait_settled(execution_id, timeout=120)
    assert settled["outcome"] == "budget-exceeded", world.run_output(execution_id)
    served = len(world.server.model_requests())
    assert served < REPLIES / 4, f"{served} replies: the run was not stopped"
    budget: dict[str, Any] = world.call("thread/budget", threadId=thread_id)["budget"]
    assert budget["level"] == "hard"
    refused = world.cli("thread", "continue", thread_id, "--headless", "--prompt", "more")
    assert refused.returncode != 0 and "BUDGET_EXCEEDED" in refused.stderr + refused.stdout
    return budget


def test_claude_spending_for_ever_is_stopped_at_the_threads_token_budget(
    make_world: WorldFactory,
) -> None:
    world = make_world(SPENDER)
    world.server.script(*[ToolCallReply("sleep 0.2", usage=USAGE)] * REPLIES)
    thread_id = world.cli_json("thread", "create", "--title", "spending")["id"]
    world.cli_json("thread", "budget", thread_id, "--tokens", "200000")
    execution_id = world.continue_headless(thread_id, "keep going", agent="spender")
    budget = spend_until_stopped(world, thread_id, execution_id)
    # stopped at the budget: over it by at most a few replies (a sync tick and a pass)
    assert 200_000 <= budget["spentTokens"] <= 200_000 + 8 * 51_000, budget


def test_codex_spending_for_ever_is_stopped_at_the_threads_usd_budget(
    make_world: WorldFactory,
) -> None:
    world = make_world(SPENDER)
    world.server.script(*[ToolCallReply("sleep 0.2", usage=USAGE)] * REPLIES)
    thread_id = world.cli_json("thread", "create", "--title", "spending")["id"]
    world.cli_json("thread", "budget", thread_id, "--usd", "0.4")
    execution_id = world.continue_headless(thread_id, "keep going", agent="coder")
    budget = spend_until_stopped(world, thread_id, execution_id)
    assert 0.4 <= budget["spentUsd"] <= 0.4 + 8 * 0.11, budget


def test_codex_is_stopped_at_the_threads_share_of_its_subscription_window(
    make_world: WorldFactory,
) -> None:
    """The server reports the 5-hour window as the real backend does for a subscription
    (`x-codex-primary-*` headers), 4 points fuller each reply; the real Codex writes it into
    its rollout, and the thread's 50% window budget ends the root."""
    world = make_world(SPENDER)
    world.server.report_window(
        RateWindow(used_percent=10, window_minutes=300, reset_at=int(time.time()) + 3600, step=4)
    )
    world.server.script(*[ToolCallReply("sleep 0.2")] * REPLIES)
    thread_id = world.cli_json("thread", "create", "--title", "windowed")["id"]
    world.cli_json("thread", "budget", thread_id, "--window-percent", "50")
    execution_id = world.continue_headless(thread_id, "keep going", agent="coder")
    budget = spend_until_stopped(world, thread_id, execution_id)
    # 50% is the 11th reply; a sync tick and a pass later at most
    assert 50 <= budget["windowUsedPercent"] <= 50 + 8 * 4, budget
    [window] = world.cli_json("ps")["windows"]
    assert (window["runtime"], window["name"], window["windowMinutes"]) == ("codex", "primary", 300)


def test_claude_reports_no_window_offline_and_a_window_budget_does_not_stop_it(
    make_world: WorldFactory,
) -> None:
    """Claude Code writes no subscription window into its transcript (nor its headless
    output): the thread's window budget does not apply, the root ends by itself."""
    world = make_world(SPENDER)
    world.server.script(*[ToolCallReply("sleep 0.5")] * 8, TextReply("done"))
    thread_id = world.cli_json("thread", "create", "--title", "windowless")["id"]
    world.cli_json("thread", "budget", thread_id, "--window-percent", "1")
    execution_id = world.continue_headless(thread_id, "keep going", agent="spender")
    settled = world.wait_settled(execution_id, timeout=120)
    assert settled["outcome"] == "completed", world.run_output(execution_id)
    budget = world.call("thread/budget", threadId=thread_id)["budget"]
    assert budget.get("level", "ok") == "ok" and "windowUsedPercent" not in budget
    assert "windows" not in world.cli_json("ps")
