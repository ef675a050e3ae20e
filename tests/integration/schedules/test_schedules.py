"""Schedules on a real alpd: fires on the anchor's grid, pause and restart without a lost or
doubled fire, missed fires coalesced after a kill -9, a busy thread queues one fire, a closed
thread stops its schedule, and every refusal is named.

Agent `tick` is a script (the `command` runtime with fixed `args`) that appends its
execution id to `ticks` in its workspace and writes its prompt to `prompt-ID`; `slow` runs
for a second and a half.
"""

from __future__ import annotations

import itertools
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from daemons import BLOCKER, StartAlpd, roots
from polling import wait_for
from store_access import raw_db

from alpctl.client import RpcError
from alpd.clock import iso
from alpd.testing.daemon import DaemonProcess

pytestmark = pytest.mark.both_stores

TICK = 'echo $ALP_EXECUTION_ID >> ticks; printf %s \\"$ALP_PROMPT\\" > prompt-$ALP_EXECUTION_ID'
CONFIG = f"""
[agents.tick]
runtime = "command"
args = ["sh", "-c", "{TICK}"]

[agents.slow]
runtime = "command"
args = ["sh", "-c", "sleep 1.5"]
"""


@pytest.fixture
def d(start_alpd: StartAlpd) -> DaemonProcess:
    return start_alpd(CONFIG)


def thread(d: DaemonProcess, work: Path, title: str = "nightly") -> str:
    created = d.call("thread/create", {"title": title, "cwd": str(work)})
    assert isinstance(created, dict)
    return str(created["id"])


def schedule(d: DaemonProcess, thread_id: str, **rule: Any) -> dict[str, Any]:
    params = {"threadId": thread_id, "prompt": "check the build", "agent": "tick", **rule}
    created = d.call("schedule/create", params)
    assert isinstance(created, dict)
    return created


def closed(d: DaemonProcess, thread_id: str) -> bool:
    try:
        d.call("thread/close", {"threadId": thread_id})
    except RpcError as busy:
        if busy.name != "THREAD_BUSY":
            raise
        return False
    return True


def settled_roots(d: DaemonProcess, thread_id: str) -> list[dict[str, Any]]:
    return [r for r in roots(d, thread_id) if r["status"] == "settled"]


def show(d: DaemonProcess, schedule_id: str) -> dict[str, Any]:
    shown = d.call("schedule/show", {"scheduleId": schedule_id})
    assert isinstance(shown, dict)
    return shown


def when(iso: str) -> datetime:
    return datetime.fromisoformat(iso.replace("Z", "+00:00"))


def grid_steps(runs: list[dict[str, Any]], anchor: str, period: float) -> list[int]:
    """Each run's fire time as a whole number of periods after the anchor."""
    steps = []
    for run in runs:
        offset = (when(run["origin"]["fireTime"]) - when(anchor)).total_seconds() / period
        assert abs(offset - round(offset)) < 1e-6, "a fire off the anchor's grid"
        steps.append(round(offset))
    return steps


def test_every_2s_fires_pauses_and_survives_a_restart_with_no_lost_or_doubled_fire(
    d: DaemonProcess, work: Path
) -> None:
    thread_id = thread(d, work)
    created = schedule(d, thread_id, every="2s")
    assert created["status"] == "active" and created["rule"] == "every 2s"
    wait_for(lambda: len(settled_roots(d, thread_id)) >= 2, what="two fires")

    paused = d.call("schedule/pause", {"scheduleId": created["id"]})
    assert paused["status"] == "paused" and "nextFireAt" not in paused
    d.call("daemon/sweep")  # a fire recorded before the pause has made its root
    wait_for(lambda: len(settled_roots(d, thread_id)) == len(roots(d, thread_id)))
    before = roots(d, thread_id)

    d.restart()
    # Two fire times pass while paused (and one across the restart): the wall clock must
    # move for that. Then a scheduler pass after them, awaited: it is what would fire.
    passed = time.monotonic() + 4.5
    wait_for(lambda: time.monotonic() > passed, what="two fire times")
    d.call("daemon/sweep")
    assert roots(d, thread_id) == before, "a paused schedule fired"

    resumed = d.call("schedule/resume", {"scheduleId": created["id"]})
    assert resumed["status"] == "active"
    wait_for(lambda: len(settled_roots(d, thread_id)) >= len(before) + 2, what="fires after")
    d.call("schedule/pause", {"scheduleId": created["id"]})
    wait_for(lambda: len(settled_roots(d, thread_id)) == len(roots(d, thread_id)))

    runs = roots(d, thread_id)
    assert all(r["kind"] == "scheduled" and r["agent"] == "tick" for r in runs)
    assert all(r["origin"]["scheduleId"] == created["id"] for r in runs)
    steps = grid_steps(runs, created["createdAt"], 2.0)
    assert steps == sorted(set(steps)), f"a fire ran twice: {steps}"
    first, second = steps[: len(before)], steps[len(before) :]
    # while active, every grid step ran once; across the pause, nothing was owed
    assert first == list(range(first[0], first[0] + len(first)))
    assert second == list(range(second[0], second[0] + len(second)))
    assert all(r["origin"].get("missed", 0) == 0 for r in runs)
    assert (work / "ticks").read_text().split() == [r["id"] for r in runs]
    envelope, text = (work / f"prompt-{runs[0]['id']}").read_text().split("\n", 1)
    assert "scheduled run of" in envelope and "every 2s" in envelope
    assert text == "> check the build"


@pytest.mark.parametrize("catch_up", ["one", "none"])
def test_fires_missed_during_a_kill9_are_one_run_with_their_count_or_none(
    d: DaemonProcess, work: Path, catch_up: str
) -> None:
    thread_id = thread(d, work)
    created = schedule(d, thread_id, every="2s", catchUp=catch_up)
    wait_for(lambda: len(settled_roots(d, thread_id)) >= 1, what="a first fire")
    d.kill9()
    down = time.monotonic()
    time.sleep(7.0)  # three or four fire times pass
    d.start()
    wait_for(lambda: time.monotonic() - down > 10.5)
    d.call("schedule/pause", {"scheduleId": created["id"]})
    wait_for(lambda: len(settled_roots(d, thread_id)) == len(roots(d, thread_id)))

    runs = roots(d, thread_id)
    steps = grid_steps(runs, created["createdAt"], 2.0)
    missed = [r["origin"].get("missed", 0) for r in runs]
    gaps = [b - a for a, b in itertools.pairwise(steps)]
    assert all(gap >= 1 for gap in gaps), f"a fire ran twice: {steps}"
    big = [i for i, gap in enumerate(gaps) if gap > 1]
    assert len(big) == 1, f"one hole in the grid, the downtime: {steps}"
    hole = big[0]
    shown = show(d, created["id"])
    if catch_up == "one":
        # the first run after the restart stands for every fire of the downtime
        assert missed[hole + 1] == gaps[hole] - 1 >= 2
        assert sum(missed) == shown["missed"]
        assert shown["runs"] == len(runs)
    else:
        assert sum(missed) == 0
        assert shown["missed"] >= gaps[hole] - 1 >= 2


def test_a_fire_that_finds_its_thread_busy_is_queued_once_not_stacked(
    d: DaemonProcess, work: Path
) -> None:
    thread_id = thread(d, work)
    busy = d.call(
        "thread/continue",
        {"threadId": thread_id, "runtime": "command", "headless": True, "args": BLOCKER,
         "cwd": str(work)},
    )["execution"]  # fmt: skip
    created = schedule(d, thread_id, every="1s")
    wait_for(lambda: show(d, created["id"]).get("missed", 0) >= 3, what="fires while busy")
    queued = d.call("daemon/ps")["queued"]
    assert [(q["threadId"], q["kind"]) for q in queued] == [(thread_id, "schedule")]
    assert show(d, created["id"])["queuedFireAt"]
    assert [r["id"] for r in roots(d, thread_id)] == [busy["id"]]

    d.call("schedule/pause", {"scheduleId": created["id"]})  # withdraws the waiting fire
    assert d.call("daemon/ps")["queued"] == []
    d.call("schedule/resume", {"scheduleId": created["id"]})
    wait_for(lambda: show(d, created["id"]).get("queuedFireAt"), what="a fire queued again")
    d.call("schedule/pause", {"scheduleId": created["id"]})
    d.call("schedule/resume", {"scheduleId": created["id"]})
    wait_for(lambda: show(d, created["id"]).get("queuedFireAt"))
    (work / "release").touch()
    wait_for(lambda: len(roots(d, thread_id)) >= 2, what="the queued fire")
    d.call("schedule/pause", {"scheduleId": created["id"]})
    wait_for(lambda: len(settled_roots(d, thread_id)) == len(roots(d, thread_id)))
    after_release = roots(d, thread_id)[1:]
    assert all(r["kind"] == "scheduled" for r in after_release)
    assert d.call("daemon/ps")["queued"] == []


def test_one_schedule_never_has_two_runs_at_once(d: DaemonProcess, work: Path) -> None:
    thread_id = thread(d, work)
    created = schedule(d, thread_id, every="1s", agent="slow")
    wait_for(lambda: len(settled_roots(d, thread_id)) >= 3, timeout=60, what="three slow runs")
    d.call("schedule/pause", {"scheduleId": created["id"]})
    wait_for(lambda: len(settled_roots(d, thread_id)) == len(roots(d, thread_id)))
    runs = roots(d, thread_id)
    # A root that never started cannot overlap: under load a fire's root can be reserved and
    # settled before its process ran (its outcome says why). Every other root must not.
    started = [r for r in runs if "startedAt" in r]
    assert all(r.get("outcome") for r in runs if "startedAt" not in r), runs
    assert len(started) >= 2, runs
    spans = sorted((when(r["startedAt"]), when(r["settledAt"])) for r in started)
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert start >= end, "two runs of one schedule overlapped"
    assert show(d, created["id"])["missed"] >= 1  # fires while a run went on were coalesced


def test_a_schedule_on_a_closed_thread_stops_with_the_reason(d: DaemonProcess, work: Path) -> None:
    thread_id = thread(d, work)
    created = schedule(d, thread_id, every="1s")
    wait_for(lambda: len(settled_roots(d, thread_id)) >= 1)
    # Every 1 s a fire may be running when the close comes (THREAD_BUSY): close between two.
    wait_for(lambda: closed(d, thread_id), what="the thread closed between two fires")
    stopped = wait_for(lambda: (s := show(d, created["id"]))["status"] == "stopped" and s)
    assert "closed" in stopped["stopReason"] and "nextFireAt" not in stopped
    count = len(roots(d, thread_id))
    # A fire time passes (every 1s), then a scheduler pass after it, awaited.
    passed = time.monotonic() + 1.5
    wait_for(lambda: time.monotonic() > passed, what="a fire time")
    d.call("daemon/sweep")
    assert len(roots(d, thread_id)) == count
    with pytest.raises(RpcError) as refused:
        d.call("schedule/resume", {"scheduleId": created["id"]})
    assert refused.value.name == "INVALID_ARGUMENT" and "stopped" in refused.value.message


def test_closing_a_thread_stops_its_schedules_at_once_not_at_their_next_fire(
    d: DaemonProcess, work: Path
) -> None:
    thread_id = thread(d, work)
    hourly = schedule(d, thread_id, every="1h")
    paused = schedule(d, thread_id, cron="0 3 * * *")
    d.call("schedule/pause", {"scheduleId": paused["id"]})
    d.call("thread/close", {"threadId": thread_id})
    for created in (hourly, paused):
        stopped = show(d, created["id"])
        assert stopped["status"] == "stopped", "the close itself stops them"
        assert stopped["stopReason"] == f"thread {thread_id} was closed"
        assert "nextFireAt" not in stopped


def test_pause_resume_and_delete_are_immediate(d: DaemonProcess, work: Path) -> None:
    thread_id = thread(d, work)
    created = schedule(d, thread_id, cron="0 3 * * *", timezone="Europe/Berlin")
    assert created["cron"] == "0 3 * * *" and created["timezone"] == "Europe/Berlin"
    local = when(created["nextFireAt"]).astimezone(__import__("zoneinfo").ZoneInfo("Europe/Berlin"))
    assert (local.hour, local.minute) == (3, 0)
    assert d.call("schedule/pause", {"scheduleId": created["id"]})["status"] == "paused"
    assert show(d, created["id"])["status"] == "paused"
    assert d.call("schedule/resume", {"scheduleId": created["id"]})["nextFireAt"]
    listed = d.call("schedule/list", {"threadId": thread_id})["schedules"]
    assert [s["id"] for s in listed] == [created["id"]]
    d.call("schedule/delete", {"scheduleId": created["id"]})
    for method in ("show", "pause", "resume", "delete", "run"):
        with pytest.raises(RpcError) as gone:
            d.call(f"schedule/{method}", {"scheduleId": created["id"]})
        assert gone.value.name == "SCHEDULE_NOT_FOUND" and gone.value.code == 1030
    assert d.call("schedule/list")["schedules"] == []


def test_run_fires_now_out_of_turn(d: DaemonProcess, work: Path) -> None:
    thread_id = thread(d, work)
    created = schedule(
        d, thread_id, at=(datetime.now().astimezone() + timedelta(days=1)).isoformat()
    )
    ran = d.call("schedule/run", {"scheduleId": created["id"]})
    assert ran["status"] == "started"
    execution = ran["execution"]
    assert execution["kind"] == "scheduled" and execution["origin"]["scheduleId"] == created["id"]
    assert ran["schedule"]["nextFireAt"] == created["nextFireAt"]


@pytest.mark.parametrize(
    ("rule", "field"),
    [
        ({"cron": "61 * * * *"}, "cron"),
        ({"cron": "0 3 * * *", "timezone": "Mars/Olympus_Mons"}, "timezone"),
        ({"every": "0s"}, "every"),
        ({"every": "often"}, "every"),
        ({"at": "2001-01-01T00:00:00Z"}, "at"),
        ({"cron": "0 3 * * *", "every": "1h"}, "rule"),
        ({}, "rule"),
    ],
)
def test_a_bad_schedule_is_refused_at_create_with_the_reason(
    d: DaemonProcess, work: Path, rule: dict[str, str], field: str
) -> None:
    thread_id = thread(d, work)
    with pytest.raises(RpcError) as refused:
        d.call("schedule/create", {"threadId": thread_id, "prompt": "x", "agent": "tick", **rule})
    assert refused.value.name == "SCHEDULE_INVALID" and refused.value.code == 1031
    assert refused.value.data["field"] == field and refused.value.message
    assert d.call("schedule/list")["schedules"] == []


def test_a_schedule_that_could_never_run_is_refused_at_create(d: DaemonProcess, work: Path) -> None:
    thread_id = thread(d, work)
    with pytest.raises(RpcError) as agent:
        d.call("schedule/create", {"threadId": thread_id, "prompt": "x", "every": "1h",
                                   "agent": "nobody"})  # fmt: skip
    assert agent.value.name == "AGENT_NOT_FOUND"
    with pytest.raises(RpcError) as missing:
        d.call("schedule/create", {"threadId": "thread_nope", "prompt": "x", "every": "1h"})
    assert missing.value.name == "THREAD_NOT_FOUND"
    d.call("thread/close", {"threadId": thread_id})
    with pytest.raises(RpcError) as closed:
        schedule(d, thread_id, every="1h")
    assert closed.value.name == "THREAD_CLOSED"


def test_cost_per_schedule_is_the_sum_over_its_runs(d: DaemonProcess, work: Path) -> None:
    thread_id = thread(d, work)
    created = schedule(d, thread_id, every="1s")
    wait_for(lambda: len(settled_roots(d, thread_id)) >= 2)
    d.call("schedule/pause", {"scheduleId": created["id"]})
    wait_for(lambda: len(settled_roots(d, thread_id)) == len(roots(d, thread_id)))
    ids = [r["id"] for r in roots(d, thread_id)]
    with raw_db(d) as db:
        for i in ids:
            db.execute("UPDATE executions SET cost_usd = 0.25 WHERE id = ?", (i,))
    shown = show(d, created["id"])
    assert shown["runs"] == len(ids)
    assert shown["costUsd"] == pytest.approx(0.25 * len(ids))
    assert shown["lastResult"] == "completed" and shown["lastExecutionId"] == ids[-1]


def test_closing_a_thread_announces_each_schedule_it_stopped(d: DaemonProcess, work: Path) -> None:
    thread_id = thread(d, work)
    hourly = schedule(d, thread_id, every="1h")
    paused = schedule(d, thread_id, cron="0 3 * * *")
    d.call("schedule/pause", {"scheduleId": paused["id"]})
    other = thread(d, work, "other")
    with d.client() as events:
        events.call("events/subscribe", {"events": ["schedule/changed"]})
        d.call("thread/close", {"threadId": thread_id})
        marker = schedule(d, other, every="1h")  # announced after whatever the close announced
        announced = list(itertools.takewhile(
            lambda n: n["params"]["schedule"]["id"] != marker["id"], events.notifications()
        ))  # fmt: skip
    assert {n["params"]["change"] for n in announced} == {"stopped"}
    by_id = {n["params"]["schedule"]["id"]: n["params"]["schedule"] for n in announced}
    assert by_id == {s["id"]: show(d, s["id"]) for s in (hourly, paused)}
    assert {s["status"] for s in by_id.values()} == {"stopped"}


@pytest.mark.parametrize("catch_up", ["one", "none"])
def test_after_a_long_downtime_catch_up_one_runs_the_latest_fire_and_none_runs_nothing(
    d: DaemonProcess, work: Path, catch_up: str
) -> None:
    """Fires missed longer ago than the scheduler's normal lateness: `one` makes one run, at
    once, for the latest (its `missed` counting the others); `none` makes no run, counts them
    all, and waits for the next fire. The downtime is made with alpd dead (25 min, not slept
    through): the grid's anchor and what was accounted for moved back, as after a kill -9
    that long ago, so fires were due 25, 15 and 5 minutes before the restart."""
    thread_id = thread(d, work)
    created = schedule(d, thread_id, every="10m", catchUp=catch_up)
    d.kill9()
    back = datetime.now(UTC) - timedelta(minutes=35)
    anchor, first = iso(back), iso(back + timedelta(minutes=10))
    with raw_db(d) as db:
        db.execute(
            "UPDATE schedules SET anchor_at = ?, accounted_until = ?, next_fire_at = ? "
            "WHERE id = ?",
            (anchor, anchor, first, created["id"]),
        )
    d.start()
    # the restarted scheduler's first pass has accounted for the downtime
    wait_for(lambda: show(d, created["id"]).get("missed", 0) + len(roots(d, thread_id)) >= 3)
    wait_for(lambda: len(settled_roots(d, thread_id)) == len(roots(d, thread_id)))
    shown = show(d, created["id"])
    runs = roots(d, thread_id)
    assert when(shown["nextFireAt"]) > datetime.now(UTC)
    assert d.call("daemon/ps")["queued"] == []
    if catch_up == "one":
        (run,) = runs
        assert run["origin"]["fireTime"] == iso(back + timedelta(minutes=30))
        assert run["origin"]["missed"] == 2 == shown["missed"]
        assert shown["runs"] == 1
    else:
        assert runs == []
        assert shown["missed"] == 3 and shown.get("runs", 0) == 0
