"""Two real alpd on one database, on both backends (tests/integration/hosts/conftest.py;
docs/many-machines.md): a thread made on A is listed, shown, searched and continued on B; 30
continues at once, split over both hosts, give one winner and the same refusals as on one
host; 100 schedules both hosts may fire, due at once, fire exactly once each."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from daemons import settled, start_headless, thread_show
from polling import wait_for
from store_access import raw_db
from test_two_hosts import host_id

from alpctl.client import RpcError
from alpd.testing.daemon import DaemonProcess

pytestmark = pytest.mark.both_stores


def test_a_thread_made_on_a_is_listed_shown_searched_and_continued_on_b(
    hosts: tuple[DaemonProcess, DaemonProcess], tmp_path: Path
) -> None:
    a, b = hosts
    host_a, host_b = host_id(a), host_id(b)
    work = tmp_path / "work"
    work.mkdir()
    thread_id = a.call("thread/create", {"title": "quokka migration", "cwd": str(work)})["id"]  # type: ignore[index]
    first = settled(a, start_headless(a, thread_id, work, ["true"])["id"])
    assert first["hostId"] == host_a
    listed = b.call("thread/list", {"all": True})["threads"]  # type: ignore[index]
    assert thread_id in [t["id"] for t in listed]
    shown = thread_show(b, thread_id)
    assert shown["thread"]["title"] == "quokka migration"
    assert [r["id"] for r in shown["roots"]] == [first["id"]]
    found = wait_for(
        lambda: [h for h in b.call("history/search", {"query": "quokka"})["hits"]  # type: ignore[index]
                 if h.get("threadId") == thread_id],
        what="B to find A's thread by its title",
    )  # fmt: skip
    assert found
    # continued on B: B's root, on the revision A's root left
    before = shown["thread"]["revision"]
    second = settled(
        b,
        b.call(
            "thread/continue",
            {"threadId": thread_id, "runtime": "command", "headless": True, "cwd": str(work),
             "args": ["true"], "ifRevision": before},
        )["execution"]["id"],  # type: ignore[index]
    )  # fmt: skip
    assert (second["hostId"], second["settledBy"], second["outcome"]) == (
        host_b,
        host_b,
        "completed",
    )
    after = thread_show(a, thread_id)
    assert [r["id"] for r in after["roots"]] == [first["id"], second["id"]]
    assert after["thread"]["revision"] > before  # B's root moved the thread on


def _contend(
    daemons: list[DaemonProcess], thread_id: str, work: Path, **extra: Any
) -> tuple[list[dict[str, Any]], list[BaseException]]:
    """One client per daemon in `daemons` calls thread/continue at the same moment."""
    barrier = threading.Barrier(len(daemons))
    won: list[dict[str, Any]] = []
    lost: list[BaseException] = []
    lock = threading.Lock()

    def contend(d: DaemonProcess) -> None:
        with d.client() as client:
            barrier.wait()
            try:
                result = client.call(
                    "thread/continue",
                    {"threadId": thread_id, "runtime": "command", "headless": True,
                     "args": ["sleep", "5"], "cwd": str(work), **extra},
                )  # fmt: skip
            except Exception as exc:
                with lock:
                    lost.append(exc)
                return
        with lock:
            won.append(result["execution"])

    threads = [threading.Thread(target=contend, args=(d,)) for d in daemons]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(won) + len(lost) == len(daemons)
    return won, lost


@pytest.mark.parametrize("if_revision", [True, False], ids=["if-revision", "no-revision"])
def test_30_continues_over_both_hosts_have_one_winner(
    hosts: tuple[DaemonProcess, DaemonProcess], tmp_path: Path, if_revision: bool
) -> None:
    a, b = hosts
    work = tmp_path / "work"
    work.mkdir()
    thread_id = a.call("thread/create", {"title": "contended", "cwd": str(work)})["id"]  # type: ignore[index]
    before = thread_show(b, thread_id)["thread"]["revision"]
    extra = {"ifRevision": before} if if_revision else {}
    won, lost = _contend([a, b] * 15, thread_id, work, **extra)
    assert len(won) == 1, [getattr(e, "name", repr(e)) for e in lost]
    winner = won[0]
    try:
        # the same rules as on one host: every loser read the winner's revision, so with
        # ifRevision each is told its read is stale; without, that a root runs (and which)
        names = [getattr(e, "name", repr(e)) for e in lost]
        if if_revision:
            assert names == ["THREAD_REVISION_CONFLICT"] * 29
            assert all(isinstance(e, RpcError) and e.data["currentRevision"] == before + 1
                       for e in lost)  # fmt: skip
        else:
            assert names == ["THREAD_BUSY"] * 29
            assert {e.data["busyRoot"] for e in lost if isinstance(e, RpcError)} == {winner["id"]}
        for d in (a, b):
            shown = thread_show(d, thread_id)
            assert shown["thread"]["revision"] == before + 1
            assert [r["id"] for r in shown["roots"]] == [winner["id"]]
    finally:
        owner = a if winner["hostId"] == host_id(a) else b
        owner.call("execution/cancel", {"executionId": winner["id"]})


SCHEDULES = 100
THREADS = 20


def test_100_schedules_both_hosts_may_fire_fire_exactly_once_each(
    hosts: tuple[DaemonProcess, DaemonProcess], tmp_path: Path
) -> None:
    """100 one-off schedules due at the same second, made half on A and half on B, then
    given to no host (as a database from before hosts has them: either host may fire them),
    so both schedulers race for every fire; each fires once, and its claim row names the host
    that won it, which keeps the schedule."""
    a, b = hosts
    host_a, host_b = host_id(a), host_id(b)
    work = tmp_path / "work"
    work.mkdir()
    due = (datetime.now(UTC) + timedelta(seconds=12)).replace(microsecond=0)
    threads = [
        (a if i % 2 else b).call("thread/create", {"title": f"nightly {i}", "cwd": str(work)})["id"]  # type: ignore[index]
        for i in range(THREADS)
    ]
    made = [
        (a if i % 2 else b).call(
            "schedule/create",
            {"threadId": threads[i % THREADS], "prompt": f"fire {i}", "agent": "tick",
             "at": due.isoformat()},
        )["id"]  # type: ignore[index]
        for i in range(SCHEDULES)
    ]  # fmt: skip
    with raw_db(a) as conn:
        conn.execute("UPDATE schedules SET host_id = NULL")
    assert datetime.now(UTC) < due, "the schedules were made too slowly for the test"

    def fired() -> list[tuple[str, int]]:
        with raw_db(a) as conn:
            return [
                (row[0], row[1])
                for row in conn.execute(
                    "SELECT json_extract(origin, '$.scheduleId'), count(*) FROM executions "
                    "WHERE is_root = 1 AND json_extract(origin, '$.scheduleId') IS NOT NULL "
                    "GROUP BY 1"
                )
            ]

    wait_for(lambda: len(fired()) == SCHEDULES, what="every schedule to fire", timeout=120)
    wait_for(
        lambda: all(not thread_show(a, t)["thread"].get("busyRoot") for t in threads),
        what="every fire's root to settle",
        timeout=120,
    )
    assert sorted(fired()) == sorted((s, 1) for s in made)  # each exactly once
    with raw_db(a) as conn:
        claims = {
            row[0]: row[1]
            for row in conn.execute("SELECT schedule_id, host_id FROM schedule_fires")
        }
        kept = dict(conn.execute("SELECT id, host_id FROM schedules").fetchall())
        roots = {
            row[0]: row[1]
            for row in conn.execute(
                "SELECT json_extract(origin, '$.scheduleId'), host_id FROM executions "
                "WHERE json_extract(origin, '$.scheduleId') IS NOT NULL"
            )
        }
    assert set(claims) == set(made) and set(claims.values()) <= {host_a, host_b}
    assert kept == claims  # the winner keeps the schedule
    assert (work / "ticks").read_text().count("\n") == SCHEDULES
    # a fire's root ran on the host that claimed it, or on the host that took its queued
    # delivery over (the thread's queue is drained by whichever host settles its root)
    assert set(roots.values()) <= {host_a, host_b}
    statuses = {s["id"]: s["status"] for s in a.call("schedule/list", {})["schedules"]}  # type: ignore[index]
    assert all(statuses[s] == "done" for s in made)
