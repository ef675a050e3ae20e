"""`daemon/ps` and `activity/list` on a real alpd, and their commands (`alp ps`, `alp activity`,
`alp schedule`): what runs with its cost, what waits, the schedules and the daemon's own
services; what ran, newest first, filtered by time, thread and kind. `temp` work is hidden
from `ps` unless asked for.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from daemons import BLOCKER, StartAlpd, cli_json
from polling import wait_for

from alpctl.client import RpcError
from alpd.testing.daemon import DaemonProcess

CONFIG = """
[agents.tick]
runtime = "command"
args = ["sh", "-c", "echo done"]
"""


@pytest.fixture
def d(start_alpd: StartAlpd) -> DaemonProcess:
    return start_alpd(CONFIG)


def start_blocker(d: DaemonProcess, work: Path, title: str) -> tuple[str, dict[str, Any]]:
    thread = d.call("thread/create", {"title": title, "cwd": str(work)})
    assert isinstance(thread, dict)
    result = d.call(
        "thread/continue",
        {"threadId": thread["id"], "runtime": "command", "headless": True, "args": BLOCKER,
         "cwd": str(work)},
    )  # fmt: skip
    assert isinstance(result, dict)
    return thread["id"], result["execution"]


def test_ps_shows_running_jobs_with_cost_queue_schedules_and_services(
    d: DaemonProcess, work: Path
) -> None:
    thread_id, running = start_blocker(d, work, "long job")
    d.call("thread/push", {"threadId": thread_id, "text": "disk full", "source": "alert",
                           "agent": "tick"})  # fmt: skip
    created = d.call("schedule/create", {"threadId": thread_id, "prompt": "p", "every": "1h",
                                         "agent": "tick"})  # fmt: skip
    with sqlite3.connect(d.home / "alp.db") as db:
        db.execute(
            "UPDATE executions SET cost_usd = 0.5, usage = ? WHERE id = ?",
            (json.dumps({"inputTokens": 1000, "outputTokens": 200}), running["id"]),
        )

    ps = cli_json(d, "ps")
    assert ps["daemon"]["pid"] == d.pid and ps["daemon"]["rssBytes"] > 1_000_000
    assert ps["daemon"]["uptimeSeconds"] > 0
    [job] = ps["jobs"]
    assert job["executionId"] == running["id"] and job["kind"] == "interactive"
    assert job["threadTitle"] == "long job" and job["runtime"] == "command"
    assert job["pid"] == running["pid"] and job["elapsedSeconds"] >= 0
    assert job["tokens"] == 1200 and job["costUsd"] == 0.5 and ps["costUsd"] == 0.5
    [queued] = ps["queued"]
    assert queued["kind"] == "push" and queued["source"] == "alert"
    assert queued["threadTitle"] == "long job"
    [listed] = ps["schedules"]
    assert listed["id"] == created["id"] and listed["nextFireAt"] == created["nextFireAt"]
    services = {s["name"]: s for s in ps["services"]}
    assert {"scheduler", "reconciler", "delivery", "history-sync"} <= set(services)
    assert services["scheduler"]["state"] == "idle"
    assert "fire(s) since start" in services["scheduler"]["detail"]

    text = d.cli("ps")
    assert text.returncode == 0
    for expected in ("RUNNING 1", "long job", "QUEUED 1", "alert", "SCHEDULES 1", "every 1h",
                     "scheduler", f"pid {d.pid}"):  # fmt: skip
        assert expected in text.stdout, expected
    (work / "release").touch()


def test_temp_work_is_hidden_from_ps_unless_all(d: DaemonProcess, work: Path) -> None:
    _, running = start_blocker(d, work, "internal")
    with sqlite3.connect(d.home / "alp.db") as db:
        db.execute("UPDATE executions SET kind = 'temp' WHERE id = ?", (running["id"],))
    ps = d.call("daemon/ps")
    assert ps["jobs"] == [] and ps["hidden"] == 1
    shown = d.call("daemon/ps", {"all": True})
    assert [j["executionId"] for j in shown["jobs"]] == [running["id"]]
    assert shown.get("hidden", 0) == 0
    assert "1 temp hidden" in d.cli("ps").stdout
    (work / "release").touch()


def test_activity_lists_what_ran_newest_first_with_kind_origin_outcome_and_cost(
    d: DaemonProcess, work: Path
) -> None:
    first = d.call("thread/create", {"title": "ops", "cwd": str(work)})
    second = d.call("thread/create", {"title": "docs", "cwd": str(work)})
    pushed = d.call("thread/push", {"threadId": first["id"], "text": "x", "source": "ci",
                                    "agent": "tick"})["execution"]  # fmt: skip
    sched = d.call("schedule/create", {"threadId": second["id"], "prompt": "p", "every": "1h",
                                       "agent": "tick"})  # fmt: skip
    fired = d.call("schedule/run", {"scheduleId": sched["id"]})["execution"]
    wait_for(lambda: all(i["status"] == "settled" for i in d.call("activity/list")["items"]))
    with sqlite3.connect(d.home / "alp.db") as db:
        db.execute("UPDATE executions SET cost_usd = 0.125 WHERE id = ?", (fired["id"],))

    items = cli_json(d, "activity", "--since", "1h")["items"]
    assert [i["executionId"] for i in items] == [fired["id"], pushed["id"]]
    newest = items[0]
    assert newest["kind"] == "scheduled" and newest["threadTitle"] == "docs"
    assert newest["origin"]["scheduleId"] == sched["id"] and newest["outcome"] == "completed"
    assert newest["costUsd"] == 0.125 and newest["durationSeconds"] >= 0
    assert items[1]["origin"]["pushSource"] == "ci"

    only = cli_json(d, "activity", "--thread", first["id"])["items"]
    assert [i["executionId"] for i in only] == [pushed["id"]]
    kind = cli_json(d, "activity", "--kind", "scheduled")["items"]
    assert [i["executionId"] for i in kind] == [fired["id"]]
    future = d.call("activity/list", {"since": "2999-01-01T00:00:00.000Z"})
    assert future["items"] == []
    with pytest.raises(RpcError) as bad:
        d.call("activity/list", {"since": "yesterday"})
    assert bad.value.name == "INVALID_ARGUMENT"
    text = d.cli("activity").stdout
    assert "scheduled" in text and "docs" in text and "$0.1250" in text and "[ci]" in text


def test_schedule_commands_round_trip_and_name_their_errors(d: DaemonProcess, work: Path) -> None:
    thread = d.call("thread/create", {"title": "nightly", "cwd": str(work)})
    done = d.cli(
        "schedule", "add", thread["id"], "--cron", "30 2 * * *", "--tz", "America/New_York",
        "--agent", "tick", "--catch-up", "none", "--json", "--", "run", "the", "report",
    )  # fmt: skip
    added = json.loads(done.stdout)
    assert added["prompt"] == "run the report" and added["catchUp"] == "none"
    assert added["timezone"] == "America/New_York"
    assert [s["id"] for s in cli_json(d, "schedule", "list")["schedules"]] == [added["id"]]
    assert "cron 30 2 * * * (America/New_York)" in d.cli("schedule", "show", added["id"]).stdout
    assert cli_json(d, "schedule", "pause", added["id"])["status"] == "paused"
    assert cli_json(d, "schedule", "resume", added["id"])["status"] == "active"
    assert cli_json(d, "schedule", "run", added["id"])["status"] == "started"
    assert cli_json(d, "schedule", "rm", added["id"])["id"] == added["id"]

    missing = d.cli("schedule", "show", added["id"])
    assert missing.returncode == 1 and "SCHEDULE_NOT_FOUND" in missing.stderr
    bad = d.cli("schedule", "add", thread["id"], "--cron", "0 25 * * *", "--", "x")
    assert bad.returncode == 1 and "SCHEDULE_INVALID" in bad.stderr
    usage = d.cli("schedule", "add", thread["id"], "--", "x")
    assert usage.returncode == 2
    local = d.cli("schedule", "add", thread["id"], "--every", "2h", "--agent", "tick", "--json",
                  "--", "x", extra_env={"TZ": "Asia/Tokyo"})  # fmt: skip
    assert json.loads(local.stdout)["timezone"] == "Asia/Tokyo"
