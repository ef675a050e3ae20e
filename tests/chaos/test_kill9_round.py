"""kill -9 of alpd between a round's reservation and its spawn: the round is not lost.

A round's deliveries are marked `delivered` in the transaction that reserves its root; the
root's process is spawned after that commit. alpd killed in between leaves a root `reserved`
with no process, which the next start settles `interrupted`. Its deliveries must go back to
the queue and reach the thread in the next round, with the reason recorded.

The window is a few milliseconds wide, so the test makes that state from a real round rather
than hoping a SIGKILL lands in it: the round's root is spawned, alpd is killed -9, the root's
process is killed too, and its row is put back as the reservation wrote it (`reserved`, no
pid, no start) — older than the spawn grace, as after a restart that took a while.

On both backends (SQLite's file, or a PostgreSQL database: `store_access.raw_db`); with alpd
stopped at the end the thread is checked whole (`thread_whole.inspect_whole`).
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from polling import wait_for
from store_access import raw_db
from thread_whole import inspect_whole

from alpd.testing.daemon import DaemonProcess, running_daemon

pytestmark = pytest.mark.chaos

CONFIG = """
[agents.watch]
runtime = "command"
args = ["sh", "-c", "printf %s \\"$ALP_PROMPT\\" > \\"{work}/prompt-$ALP_EXECUTION_ID\\"; while [ ! -f {work}/release ]; do sleep 0.05; done"]
"""  # noqa: E501


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


def roots(d: DaemonProcess, thread_id: str) -> list[dict[str, Any]]:
    shown = d.call("thread/show", {"threadId": thread_id})
    assert isinstance(shown, dict)
    return list(shown["roots"])


def kill_run(execution_id: str) -> None:
    for process in psutil.process_iter():
        try:
            if process.environ().get("ALP_EXECUTION_ID") == execution_id:
                process.send_signal(signal.SIGKILL)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue


def as_just_reserved(d: DaemonProcess, execution_id: str) -> None:
    """With alpd dead: the root's row as the reserving transaction left it."""
    with raw_db(d) as db:
        db.execute(
            "UPDATE executions SET status = 'reserved', pid = NULL, pid_start_time = NULL, "
            "boot_id = NULL, started_at = NULL, created_at = '2026-01-01T00:00:00.000Z' "
            "WHERE id = ?",
            (execution_id,),
        )
    (d.home / "executions" / execution_id / "exit-status").unlink(missing_ok=True)


@pytest.mark.both_stores
def test_a_round_reserved_but_never_spawned_is_queued_again_after_a_kill9(
    d: DaemonProcess, work: Path
) -> None:
    thread = d.call("thread/create", {"title": "ops", "cwd": str(work)})
    assert isinstance(thread, dict)
    pushed = d.call(
        "thread/push",
        {"threadId": thread["id"], "text": "disk at 91%", "source": "disk-alert", "agent": "watch"},
    )
    assert isinstance(pushed, dict) and pushed["status"] == "started"
    lost = pushed["execution"]["id"]
    try:
        wait_for(lambda: (work / f"prompt-{lost}").exists(), what="the round's root to start")
        d.kill9()
    finally:
        kill_run(lost)
    as_just_reserved(d, lost)
    (work / f"prompt-{lost}").unlink()
    (work / "release").touch()
    d.start()

    wait_for(lambda: len(roots(d, thread["id"])) == 2, what="the round again, in a new root")
    first, again = roots(d, thread["id"])
    assert (first["id"], first["outcome"]) == (lost, "interrupted")
    wait_for(lambda: (work / f"prompt-{again['id']}").exists(), what="the new root to run")
    assert (work / f"prompt-{again['id']}").read_text().endswith("\n> disk at 91%")
    with raw_db(d) as db:
        status, execution_id, note = db.execute(
            "SELECT status, execution_id, note FROM deliveries WHERE id = ?",
            (pushed["deliveryId"],),
        ).fetchone()
    assert (status, execution_id) == ("delivered", again["id"])
    assert (
        note == f"root {lost} was reserved for it but never started (alpd stopped first); re-queued"
    )
    wait_for(lambda: roots(d, thread["id"])[1]["status"] == "settled", what="the new root")
    d.stop()
    revision, statuses = inspect_whole(d, thread["id"])
    assert statuses == {lost: "settled", again["id"]: "settled"}
    assert revision == 2
