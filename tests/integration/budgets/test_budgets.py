"""Budgets of a thread and of a schedule on a real alpd (docs/budgets.md): a stand-in
`claude` spends 0.003 USD (1,100 tokens) every 0.2 s for ever; the thread's or schedule's
hard limit ends the root `budget-exceeded` and refuses the next root (BUDGET_EXCEEDED), a
soft limit is announced once on `events/subscribe` and through the desktop notifier, and
`alp ps` shows the spend and the burn rate."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from daemons import StartAlpd, settled
from polling import wait_for
from spending_claude import PRICES, spending_claude

from alpctl.client import RpcError
from alpd.testing.daemon import DaemonProcess

CONFIG = """
[agents.spender]
runtime = "claude"
timeout = "10m"

[runtimes.claude]
command = {command}
{prices}
"""


@pytest.fixture
def d(start_alpd: StartAlpd, tmp_path: Path) -> DaemonProcess:
    fake = spending_claude(tmp_path / "claude")
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    notifier = fake_bin / "notify-send"
    notifier.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> {tmp_path / "notified.txt"}\n')
    notifier.chmod(0o755)
    env = {
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude-config"),
        "PATH": f"{fake_bin}{os.pathsep}{os.environ['PATH']}",
    }
    return start_alpd(CONFIG.format(command=json.dumps(str(fake)), prices=PRICES), extra_env=env)


def go(d: DaemonProcess, thread_id: str, **extra: Any) -> dict[str, Any]:
    started: Any = d.call(
        "thread/continue",
        {"threadId": thread_id, "agent": "spender", "headless": True, "prompt": "go", **extra},
    )
    return dict(started["execution"])


def test_a_threads_hard_budget_ends_its_root_and_refuses_the_next_until_raised(
    d: DaemonProcess, work: Path, tmp_path: Path
) -> None:
    thread: Any = d.call("thread/create", {"title": "capped thread", "cwd": str(work)})
    shown = d.cli("thread", "budget", thread["id"], "--usd", "100", "--soft", "0.003")
    assert shown.returncode == 0, shown.stderr
    assert "of 100.00 USD (soft 0.00)" in shown.stdout, shown.stdout
    with d.client() as events:
        events.call("events/subscribe", {"events": ["budget/warning"]})
        execution = go(d, thread["id"])
        soft = next(events.notifications())["params"]
        # lowered under the spend: the next pass ends the root and says so
        d.call("thread/budget", {"threadId": thread["id"], "usd": 0.01})
        hard = next(events.notifications())["params"]
        done = settled(d, execution["id"], timeout=30)
    assert done["outcome"] == "budget-exceeded"
    assert (soft["budget"]["level"], hard["budget"]["level"]) == ("soft", "hard")
    assert soft["threadTitle"] == "capped thread" and soft["executionId"] == execution["id"]
    assert "soft limit reached" in soft["message"]
    assert "hard limit reached" in hard["message"]
    notified = wait_for(lambda: (tmp_path / "notified.txt").exists(), what="notify-send")
    assert notified and "budget" in (tmp_path / "notified.txt").read_text()

    with pytest.raises(RpcError) as info:
        go(d, thread["id"])
    assert info.value.name == "BUDGET_EXCEEDED"
    assert info.value.data["scope"] == "thread" and info.value.data["usd"] == 0.01
    assert info.value.data["spentUsd"] >= 0.01
    assert "alp thread budget" in str(info.value)
    refused = d.cli(
        "thread", "continue", thread["id"], "--agent", "spender", "--headless", "--prompt", "x",
        cwd=str(work),
    )  # fmt: skip
    assert refused.returncode != 0 and "BUDGET_EXCEEDED" in refused.stderr + refused.stdout

    budget: Any = d.call("thread/budget", {"threadId": thread["id"]})
    assert budget["budget"]["level"] == "hard" and budget["budget"]["spentTokens"] >= 4400
    d.call("thread/budget", {"threadId": thread["id"], "usd": 100.0})
    again = go(d, thread["id"])
    ps = json.loads(d.cli("ps", "--json").stdout)
    budgets = [b for b in ps["budgets"] if b["targetId"] == thread["id"]]
    assert budgets and budgets[0]["usd"] == 100.0 and budgets[0].get("level", "ok") == "ok"
    d.call("execution/cancel", {"executionId": again["id"]})
    assert settled(d, again["id"])["outcome"] == "cancelled"
    cleared: Any = d.call("thread/budget", {"threadId": thread["id"], "clear": True})
    assert "budget" not in cleared


def test_ps_shows_a_running_roots_burn_rate_and_forecast(d: DaemonProcess, work: Path) -> None:
    thread: Any = d.call("thread/create", {"title": "burning", "cwd": str(work)})
    execution = go(d, thread["id"])

    def burning() -> dict[str, Any] | None:
        ps: Any = d.call("daemon/ps", {})
        jobs = [j for j in ps["jobs"] if j["executionId"] == execution["id"]]
        return jobs[0] if jobs and jobs[0].get("forecastUsd") else None

    job = wait_for(burning, what="a burn rate in ps")
    assert job["timeoutSeconds"] == 600
    assert job["burnUsdPerHour"] > 0 and job["forecastUsd"] > job["costUsd"]
    shown = d.cli("ps")
    assert "burn $" in shown.stdout and "by its 10m" in shown.stdout, shown.stdout
    d.call("execution/cancel", {"executionId": execution["id"]})
    settled(d, execution["id"])


def test_a_runs_token_cap_ends_it(d: DaemonProcess, work: Path) -> None:
    thread: Any = d.call("thread/create", {"title": "tokens", "cwd": str(work)})
    execution = go(d, thread["id"], budgetTokens=3000)
    shown: Any = d.call("execution/show", {"executionId": execution["id"]})
    assert shown["policy"]["budgetTokens"] == 3000
    done = settled(d, execution["id"], timeout=30)
    assert done["outcome"] == "budget-exceeded"


def test_a_schedules_budget_ends_its_fire_and_refuses_the_next(
    d: DaemonProcess, work: Path
) -> None:
    thread: Any = d.call("thread/create", {"title": "nightly", "cwd": str(work)})
    made = d.cli(
        "schedule", "add", thread["id"], "--every", "1d", "--agent", "spender",
        "--total-usd", "0.005", "--json", "--", "spend", cwd=str(work),
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    schedule = json.loads(made.stdout)
    fired: Any = d.call("schedule/run", {"scheduleId": schedule["id"]})
    done = settled(d, fired["execution"]["id"], timeout=30)
    assert done["outcome"] == "budget-exceeded"
    with pytest.raises(RpcError) as info:
        d.call("schedule/run", {"scheduleId": schedule["id"]})
    assert info.value.name == "BUDGET_EXCEEDED" and info.value.data["scope"] == "schedule"
    # the thread has no budget of its own: a person's continue still runs
    again = go(d, thread["id"])
    d.call("execution/cancel", {"executionId": again["id"]})
    settled(d, again["id"])


def test_a_bad_budget_is_refused_with_what_to_do(d: DaemonProcess, work: Path) -> None:
    thread: Any = d.call("thread/create", {"title": "bad", "cwd": str(work)})
    with pytest.raises(RpcError) as info:
        d.call("thread/budget", {"threadId": thread["id"], "usd": 1.0, "softUsd": 2.0})
    assert info.value.name == "INVALID_ARGUMENT" and "below the hard one" in str(info.value)
    with pytest.raises(RpcError) as info:
        d.call("thread/budget", {"threadId": thread["id"], "softUsd": 2.0})
    assert "needs a hard one" in str(info.value)
