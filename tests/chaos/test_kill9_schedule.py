"""kill -9 of alpd between recording a schedule's fire and delivering it: exactly one run.

A pass of the scheduler records the fire it is about to run (`firing_at`, with the plan's
advance) in one transaction, hands it to the delivery queue, then clears `firing_at`. alpd
killed after the record finds `firing_at` set at its next start and delivers that fire unless
a delivery already carries it (`alpd.background.scheduler`, `_recover`).

The window is a few milliseconds wide, so the test makes each state from the real thing
rather than hoping a SIGKILL lands in it, with alpd dead: `firing_at` written as the record
writes it with no delivery made (killed before the submit), or over a fire that was delivered
(killed after the submit, before the clear). Then alpd starts, and the proof that no second
run follows is the store itself: `firing_at` cleared, nothing queued, every root settled.

On both backends (SQLite's file, or a PostgreSQL database: `store_access.raw_db`); with alpd
stopped at the end the thread is checked whole (`thread_whole.inspect_whole`).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from polling import wait_for
from store_access import raw_db
from thread_whole import inspect_whole

from alpd.clock import iso
from alpd.testing.daemon import DaemonProcess, running_daemon

pytestmark = pytest.mark.chaos

CONFIG = """
[agents.tick]
runtime = "command"
args = ["sh", "-c", "printf %s \\"$ALP_PROMPT\\" > \\"{work}/prompt-$ALP_EXECUTION_ID\\""]
"""


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture
def d(tmp_path: Path, work: Path, store_url: str | None) -> Iterator[DaemonProcess]:
    (tmp_path / "config.toml").write_text(CONFIG.format(work=work))
    env = {"ALP_STORE_URL": store_url} if store_url else {}
    args = ["--config", str(tmp_path / "config.toml")]
    with running_daemon(tmp_path, extra_args=args, extra_env=env) as daemon:
        yield daemon


def call(d: DaemonProcess, method: str, params: dict[str, Any]) -> dict[str, Any]:
    result = d.call(method, params)
    assert isinstance(result, dict)
    return result


def roots(d: DaemonProcess, thread_id: str) -> list[dict[str, Any]]:
    return list(call(d, "thread/show", {"threadId": thread_id})["roots"])


def stored(d: DaemonProcess, schedule_id: str, thread_id: str) -> tuple[str | None, int]:
    """The schedule's recorded fire, and how many deliveries wait for the thread."""
    with raw_db(d) as db:
        (firing,) = db.execute(
            "SELECT firing_at FROM schedules WHERE id = ?", (schedule_id,)
        ).fetchone()
        (queued,) = db.execute(
            "SELECT count(*) FROM deliveries WHERE thread_id = ? AND status = 'queued'",
            (thread_id,),
        ).fetchone()
    return firing, queued


def record_fire(d: DaemonProcess, schedule_id: str, fire_time: str) -> None:
    """With alpd dead: the fire recorded as the scheduler's pass records it."""
    with raw_db(d) as db:
        db.execute(
            "UPDATE schedules SET firing_at = ?, firing_missed = 0, last_fire_at = ? WHERE id = ?",
            (fire_time, fire_time, schedule_id),
        )


@pytest.mark.both_stores
@pytest.mark.parametrize("killed", ["before-the-submit", "after-the-submit"])
def test_a_fire_recorded_before_a_kill9_is_exactly_one_run_after_the_restart(
    d: DaemonProcess, work: Path, killed: str
) -> None:
    thread_id = call(d, "thread/create", {"title": "nightly", "cwd": str(work)})["id"]
    later = iso(datetime.now(UTC) + timedelta(hours=1))
    created = call(
        d, "schedule/create",
        {"threadId": thread_id, "prompt": "check the build", "agent": "tick", "at": later},
    )  # fmt: skip
    if killed == "after-the-submit":
        # a real delivery of the schedule's: the one the recorded fire stands for
        ran = call(d, "schedule/run", {"scheduleId": created["id"]})["execution"]
        d.call("execution/wait", {"executionId": ran["id"], "timeout": 60})
        fire_time = ran["origin"]["fireTime"]
    else:
        fire_time = iso(datetime.now(UTC) - timedelta(seconds=5))
    d.kill9()
    record_fire(d, created["id"], fire_time)
    d.start()

    wait_for(lambda: stored(d, created["id"], thread_id) == (None, 0), what="the fire dealt with")
    wait_for(lambda: all(r["status"] == "settled" for r in roots(d, thread_id)))
    runs = roots(d, thread_id)
    assert len(runs) == 1, runs
    assert runs[0]["origin"]["scheduleId"] == created["id"]
    assert runs[0]["origin"]["fireTime"] == fire_time
    assert (work / f"prompt-{runs[0]['id']}").read_text().endswith("\n> check the build")
    d.stop()
    revision, statuses = inspect_whole(d, thread_id)
    assert (revision, statuses) == (1, {runs[0]["id"]: "settled"})
