"""A run's guard rails (issue 22, point 6): a time limit and a cost cap from the agent's
config or the continue, in the hash-covered policy, ended by alpd with the outcome named."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from daemons import settled
from spending_claude import PRICES, spending_claude

from alpd.testing.daemon import DaemonProcess, running_daemon

CONFIG = """
[agents.sleeper]
runtime = "command"
args = ["sh", "-c", "echo started; sleep 60"]
timeout = "2s"

[agents.patient]
runtime = "command"
args = ["sh", "-c", "sleep 60"]

[agents.spender]
runtime = "claude"
budget_usd = 0.005

[runtimes.claude]
command = {command}
{prices}
"""


@pytest.fixture
def d(tmp_path: Path) -> Iterator[DaemonProcess]:
    fake = spending_claude(tmp_path / "claude")
    config = tmp_path / "config.toml"
    config.write_text(CONFIG.format(command=json.dumps(str(fake)), prices=PRICES))
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude-config")}
    with running_daemon(tmp_path, extra_env=env, extra_args=["--config", str(config)]) as daemon:
        yield daemon


def start(d: DaemonProcess, work: Path, agent: str, **extra: Any) -> dict[str, Any]:
    thread: Any = d.call("thread/create", {"title": agent, "cwd": str(work)})
    started: Any = d.call(
        "thread/continue",
        {"threadId": thread["id"], "agent": agent, "headless": True, "prompt": "go", **extra},
    )
    return dict(started["execution"])


def policy_of(d: DaemonProcess, execution_id: str) -> dict[str, Any]:
    shown: Any = d.call("execution/show", {"executionId": execution_id})
    return dict(shown["policy"])


def test_a_run_past_its_agents_time_limit_is_ended_and_settles_timed_out(
    d: DaemonProcess, work: Path
) -> None:
    execution = start(d, work, "sleeper")
    policy = policy_of(d, execution["id"])
    assert policy["version"] == 4 and policy["timeoutSeconds"] == 2
    done = settled(d, execution["id"], timeout=30)
    assert done["outcome"] == "timed-out"
    assert done["settledAt"] is not None
    activity: Any = d.call("activity/list", {})
    assert [i["outcome"] for i in activity["items"] if i["executionId"] == execution["id"]] == [
        "timed-out"
    ]


def test_a_continue_sets_its_own_time_limit_over_the_agents(d: DaemonProcess, work: Path) -> None:
    execution = start(d, work, "patient", timeoutSeconds=1)
    assert policy_of(d, execution["id"])["timeoutSeconds"] == 1
    assert settled(d, execution["id"], timeout=30)["outcome"] == "timed-out"


def test_a_run_with_no_limit_has_none_in_its_policy(d: DaemonProcess, work: Path) -> None:
    execution = start(d, work, "patient")
    policy = policy_of(d, execution["id"])
    assert "timeoutSeconds" not in policy and "budgetUsd" not in policy
    d.call("execution/cancel", {"executionId": execution["id"]})
    assert settled(d, execution["id"])["outcome"] == "cancelled"


def test_a_run_whose_cost_reaches_its_cap_is_ended_budget_exceeded(
    d: DaemonProcess, work: Path
) -> None:
    execution = start(d, work, "spender")
    assert policy_of(d, execution["id"])["budgetUsd"] == 0.005
    done = settled(d, execution["id"], timeout=30)
    assert done["outcome"] == "budget-exceeded"
    # ended soon after crossing: at 0.006 (two responses) or a little more, not minutes on
    assert 0.005 <= done["costUsd"] < 0.05


def test_a_continue_can_cap_the_cost_of_its_run(d: DaemonProcess, work: Path) -> None:
    thread: Any = d.call("thread/create", {"title": "capped", "cwd": str(work)})
    done = d.cli(
        "thread", "continue", thread["id"], "--agent", "claude", "--headless", "--prompt", "go",
        "--budget-usd", "0.004", "--wait", "--json", cwd=str(work),
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    assert result["execution"]["outcome"] == "budget-exceeded"


def test_a_bad_limit_in_config_is_refused_with_its_line(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[agents.x]\nruntime = "command"\ntimeout = "soon"\n')
    with running_daemon(tmp_path) as daemon:
        config_path = Path(daemon.home) / "config.toml"
        config_path.write_text(config.read_text())
        reload = daemon.cli("daemon", "reload")
        assert reload.returncode != 0
        assert "config.toml:3: agents.x.timeout" in reload.stderr, reload.stderr


def test_a_schedules_own_limits_go_into_the_policy_of_each_root_it_fires(
    d: DaemonProcess, work: Path
) -> None:
    thread: Any = d.call("thread/create", {"title": "nightly", "cwd": str(work)})
    added = d.cli(
        "schedule", "add", thread["id"], "--every", "1h", "--agent", "patient",
        "--timeout", "2s", "--budget-usd", "3", "--json", "--", "go",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    schedule = json.loads(added.stdout)
    assert (schedule["timeoutSeconds"], schedule["budgetUsd"]) == (2, 3.0)
    shown = d.cli("schedule", "show", schedule["id"])
    assert "each run ends after 2.0s or at $3.00" in shown.stdout, shown.stdout
    fired: Any = d.call("schedule/run", {"scheduleId": schedule["id"]})
    execution = fired["execution"]
    policy = policy_of(d, execution["id"])
    assert (policy["timeoutSeconds"], policy["budgetUsd"]) == (2, 3.0)
    assert settled(d, execution["id"], timeout=30)["outcome"] == "timed-out"
    # a schedule with none of its own takes the agent's (the patient one has none)
    plain: Any = d.call(
        "schedule/create",
        {"threadId": thread["id"], "prompt": "go", "every": "1h", "agent": "sleeper"},
    )
    assert "timeoutSeconds" not in plain
    again: Any = d.call("schedule/run", {"scheduleId": plain["id"]})
    assert policy_of(d, again["execution"]["id"])["timeoutSeconds"] == 2  # the sleeper's own
