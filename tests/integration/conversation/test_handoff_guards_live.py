"""The loop guards and the ownership checks of handoffs on a real alpd.

50 simultaneous sends between one pair with a quota of 6 deliver exactly 6: the slot is
reserved in the same transaction that counts the pair's slots. Deliveries that fail release
their slot. A delivery is made only into a thread of the user who sent it — checked when it
is sent and again on every path that delivers it (a round that wakes or follows a busy root,
and a running root taking it mid-run) — and another uid can neither send, nor receive, nor
read or decide an inbox.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from daemons import StartAlpd, roots
from handoff_threads import (
    blocker,
    call,
    handoff,
    handoff_config,
    settled,
    show,
    thread,
    write_config,
)
from polling import wait_for
from test_security import NOBODY, ROOT_ONLY, SKIP_UNLESS_ROOT, foreign_call

from alpctl.client import Client, RpcError
from alpd.testing.daemon import DaemonProcess
from protocol import errors


@pytest.fixture
def d(start_alpd: StartAlpd, work: Path) -> DaemonProcess:
    return start_alpd(handoff_config(work))


def send_all(d: DaemonProcess, count: int, target: str, source: str) -> list[str]:
    """`count` sends at once, each on its own connection: the name of each outcome."""

    def one(i: int) -> str:
        try:
            with Client.connect(d.socket_path) as client:
                client.call("handoff/send", {"target": target, "summary": f"n{i}", "from": source})
            return "ok"
        except RpcError as exc:
            return exc.name

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(one, range(count)))


def test_fifty_simultaneous_sends_with_a_quota_of_six_deliver_exactly_six(
    d: DaemonProcess, work: Path
) -> None:
    research = thread(d, work, "research")
    build = thread(d, work, "build")
    outcomes = send_all(d, 50, build, research)
    assert outcomes.count("ok") == 6, outcomes
    assert outcomes.count("HANDOFF_RATE_LIMITED") == 44, outcomes
    wait_for(lambda: settled(d, build) and len(roots(d, build)) >= 2)
    delivered = show(d, build)["handoffsIn"]
    assert len(delivered) == 6 and {h["status"] for h in delivered} == {"sent"}
    with pytest.raises(RpcError) as limited:
        handoff(d, build, "one more", **{"from": research})
    data = limited.value.data
    assert (data["quota"], data["inWindow"], data["windowSeconds"]) == (6, 6, 600)
    assert 0 < data["retryAfterSeconds"] <= 600 and data["retryAt"].endswith("Z")
    # the reverse pair has a quota of its own
    assert handoff(d, research, "the other way", **{"from": build})["handoff"]["hop"] == 1


def test_failed_deliveries_burn_no_slot(d: DaemonProcess, work: Path, tmp_path: Path) -> None:
    research = thread(d, work, "research")
    target = thread(d, work, "flaky", agent="flaky")
    write_config(tmp_path, broken=True)
    d.call("daemon/reload")
    # One after another: each failure gives its slot back, so none is ever rate limited.
    for i in range(10):
        with pytest.raises(RpcError) as failing:
            handoff(d, target, f"attempt {i}", **{"from": research})
        assert failing.value.name == "RUNTIME_UNAVAILABLE"
    # All at once: up to six are reserved together (the others wait their turn as
    # HANDOFF_RATE_LIMITED), each fails and is released.
    outcomes = send_all(d, 50, target, research)
    assert set(outcomes) <= {"RUNTIME_UNAVAILABLE", "HANDOFF_RATE_LIMITED"}, outcomes
    assert outcomes.count("RUNTIME_UNAVAILABLE") >= 6, outcomes
    failed = show(d, target)["handoffsIn"]
    assert {h["status"] for h in failed} == {"failed"}
    write_config(tmp_path)
    d.call("daemon/reload")
    outcomes = send_all(d, 7, target, research)
    assert sorted(outcomes) == ["HANDOFF_RATE_LIMITED"] + ["ok"] * 6, outcomes


def as_another_user(d: DaemonProcess, table: str, row_id: str) -> None:
    """Give a row to uid nobody, as a database shared by mistake or edited by hand would."""
    with sqlite3.connect(d.home / "alp.db", timeout=30) as db:
        db.execute(f"UPDATE {table} SET owner_uid = ? WHERE id = ?", (NOBODY, row_id))


def stored(d: DaemonProcess, sql: str, *args: object) -> list[tuple[Any, ...]]:
    with sqlite3.connect(d.home / "alp.db", timeout=30) as db:
        return list(db.execute(sql, args))


def test_reservations_abandoned_by_a_dead_daemon_expire(start_alpd: StartAlpd, work: Path) -> None:
    """A kill -9 between reserve and commit leaves reservations of a dead holder: they count
    for `reservationSeconds`, then free their slots (marked failed, never delivered)."""
    d = start_alpd(handoff_config(work, reservation=3))
    research = thread(d, work, "research")
    build = thread(d, work, "build")
    d.kill9()
    now = time.time()
    with sqlite3.connect(d.home / "alp.db") as db:
        db.executemany(
            "INSERT INTO handoffs (id, owner_uid, source_thread_id, target_thread_id, "
            "summary, artifacts, directive, chain_id, hop, slot, reserved_at, holder, "
            "status, created_at) VALUES (?, ?, ?, ?, 'lost', '[]', 0, ?, 1, 'reserved', ?, "
            "'alpd_dead', 'sending', '2026-01-01T00:00:00.000Z')",
            [(f"handoff_lost{i}", os.getuid(), research, build, f"chain_{i}", now)
             for i in range(6)],
        )  # fmt: skip
    d.start()
    with pytest.raises(RpcError) as limited:
        handoff(d, build, "too soon", **{"from": research})
    assert 0 < limited.value.data["retryAfterSeconds"] <= 3
    wait_for(lambda: time.time() > now + 3, what="the reservations to expire")
    assert handoff(d, build, "now", **{"from": research})["handoff"]["status"] == "sent"
    lost = stored(d, "SELECT slot, status FROM handoffs WHERE summary = 'lost'")
    assert lost == [("released", "failed")] * 6


def test_a_running_root_that_asks_takes_the_handoff_mid_run(d: DaemonProcess, work: Path) -> None:
    research = thread(d, work, "research")
    build = thread(d, work, "build")
    taker = call(d, "thread/push", {"threadId": build, "text": "work", "source": "setup",
                                    "agent": "taker"})["execution"]  # fmt: skip
    sent = handoff(d, build, "new numbers", **{"from": research})["handoff"]
    assert sent["path"] == "queue"
    (work / "go").touch()
    d.call("execution/wait", {"executionId": taker["id"], "timeout": 60})
    taken = json.loads((work / f"taken-{taker['id']}").read_text())["deliveries"]
    assert [t["text"] for t in taken] == ["new numbers"]
    assert taken[0]["envelope"].startswith('[alp · handoff from thread "research"')
    wait_for(lambda: settled(d, build))
    [arrived] = show(d, build)["handoffsIn"]
    assert (arrived["path"], arrived["deliveredExecutionId"]) == ("inject", taker["id"])
    assert len(roots(d, build)) == 2  # seed, taker: no round delivered it again


def test_a_thread_of_another_user_can_neither_send_nor_receive(
    d: DaemonProcess, work: Path
) -> None:
    research = thread(d, work, "research")
    theirs = thread(d, work, "theirs")
    as_another_user(d, "threads", theirs)
    with pytest.raises(RpcError) as to_them:
        handoff(d, theirs, "x", **{"from": research})
    assert to_them.value.name == "HANDOFF_DENIED"
    assert to_them.value.data["reason"] == "other-owner"
    with pytest.raises(RpcError) as from_them:
        handoff(d, research, "x", **{"from": theirs})
    assert from_them.value.data["reason"] == "other-owner"
    with pytest.raises(RpcError) as by_title:
        handoff(d, "theirs", "x", **{"from": research})  # their titles are not searched
    assert by_title.value.name == "THREAD_NOT_FOUND"
    assert stored(d, "SELECT count(*) FROM handoffs") == [(0,)]


def test_a_queued_handoff_is_not_delivered_to_a_thread_that_changed_hands(
    d: DaemonProcess, work: Path
) -> None:
    research = thread(d, work, "research")
    build = thread(d, work, "build")
    blocker(d, work, build)
    sent = handoff(d, build, "queued", **{"from": research})["handoff"]
    as_another_user(d, "threads", build)
    (work / "release").touch()
    wait_for(
        lambda: stored(d, "SELECT status FROM handoffs WHERE id = ?", sent["id"]) == [("failed",)],
        what="the round to refuse the delivery",
    )
    assert stored(d, "SELECT slot FROM handoffs WHERE id = ?", sent["id"]) == [("released",)]
    assert stored(d, "SELECT count(*) FROM executions WHERE thread_id = ?", build) == [(2,)]
    [(error,)] = stored(d, "SELECT error FROM deliveries WHERE status = 'failed'")
    assert "another user" in error


def test_a_running_root_is_not_handed_what_was_sent_to_its_threads_old_owner(
    d: DaemonProcess, work: Path
) -> None:
    research = thread(d, work, "research")
    build = thread(d, work, "build")
    taker = call(d, "thread/push", {"threadId": build, "text": "work", "source": "setup",
                                    "agent": "taker"})["execution"]  # fmt: skip
    handoff(d, build, "not for the new owner", **{"from": research})
    as_another_user(d, "threads", build)
    (work / "go").touch()
    wait_for(lambda: (work / f"taken-{taker['id']}").exists(), what="the run to ask")
    wait_for(lambda: (work / f"taken-{taker['id']}").read_text().endswith("}"))
    assert json.loads((work / f"taken-{taker['id']}").read_text()) == {"deliveries": []}


def test_another_users_inbox_item_is_neither_listed_nor_decided(
    d: DaemonProcess, work: Path
) -> None:
    thread(d, work, "monitor")
    trading = thread(d, work, "trading")
    item = handoff(d, trading, "sell", directive=True, **{"from": "monitor"})["handoff"]
    as_another_user(d, "handoffs", item["id"])
    assert "items" not in call(d, "inbox/list", {}) or call(d, "inbox/list", {})["items"] == []
    for method in ("inbox/confirm", "inbox/dismiss"):
        with pytest.raises(RpcError) as refused:
            call(d, method, {"id": item["id"]})
        assert refused.value.name == "INBOX_ITEM_NOT_FOUND"


def test_a_run_cannot_confirm_a_directive(d: DaemonProcess, work: Path) -> None:
    thread(d, work, "monitor")
    trading = thread(d, work, "trading")
    item = handoff(d, trading, "sell all", directive=True, **{"from": "monitor"})["handoff"]
    (work / "item").write_text(item["id"])
    decider = call(d, "thread/push", {"threadId": trading, "text": "decide", "source": "setup",
                                      "agent": "decider"})["execution"]  # fmt: skip
    d.call("execution/wait", {"executionId": decider["id"], "timeout": 60})
    log = (work / "decider.log").read_text()
    assert "NOT_FROM_A_RUN" in log and "exit 1" in log, log
    assert [i["id"] for i in call(d, "inbox/list", {})["items"]] == [item["id"]]


@ROOT_ONLY
@SKIP_UNLESS_ROOT
@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("handoff/send", {"target": "build", "summary": "x", "from": "research"}),
        ("inbox/list", {}),
        ("inbox/confirm", {"id": "ITEM"}),
        ("inbox/dismiss", {"id": "ITEM"}),
    ],
)
def test_another_uid_can_neither_send_nor_read_or_decide_an_inbox(
    d: DaemonProcess, work: Path, method: str, params: dict[str, str]
) -> None:
    thread(d, work, "research")
    build = thread(d, work, "build")
    item = handoff(d, build, "wait", directive=True, **{"from": "research"})["handoff"]
    params = {k: item["id"] if v == "ITEM" else v for k, v in params.items()}
    request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    out = foreign_call(d.socket_path, json.dumps(request).encode() + b"\n")
    reply = json.loads(out.splitlines()[0])
    assert "result" not in reply
    assert reply["error"]["code"] == errors.code_of("PERMISSION_DENIED")
    assert [i["id"] for i in call(d, "inbox/list", {})["items"]] == [item["id"]]
    assert len(show(d, build)["handoffsIn"]) == 1


def test_runs_that_push_to_their_own_thread_again_and_again_stop_at_the_hop_bound(
    d: DaemonProcess, work: Path
) -> None:
    """Pushes sent from runs carry their chain. A run may push only to its own thread (to
    reach another it hands off: NOT_FROM_A_RUN), so the loop left is a thread whose every run
    pushes to it again: run 1 pushes (hop 1), the round it makes pushes (2), the next (3),
    and the fourth push is refused — four runs, not forever."""
    loop = thread(d, work, "loop", agent=None)
    call(d, "thread/push", {"threadId": loop, "text": "start", "source": "person",
                            "agent": "ring"})  # fmt: skip
    log = work / "ring.log"
    wait_for(lambda: log.exists() and log.read_text().count("exit") == 4, 180, what="4 pushes")
    wait_for(lambda: settled(d, loop))
    text = log.read_text()
    assert text.count("exit 0") == 3 and text.count("exit 1") == 1, text
    assert "HANDOFF_LOOP" in text and "hop 4" in text, text
    assert len(roots(d, loop)) == 4
    with sqlite3.connect(f"file:{d.home / 'alp.db'}?mode=ro", uri=True) as db:
        sent = db.execute(
            "SELECT hop, count(DISTINCT chain_id), min(origin), count(*) FROM deliveries "
            "WHERE from_thread_id IS NOT NULL GROUP BY hop ORDER BY hop"
        ).fetchall()
        queued = db.execute("SELECT count(*) FROM deliveries WHERE status = 'queued'").fetchone()
    assert [(hop, chains, n) for hop, chains, _, n in sent] == [(1, 1, 1), (2, 1, 1), (3, 1, 1)]
    assert all('"by":"execution:' in origin for _, _, origin, _ in sent)
    assert queued == (0,)  # nothing left to start a fifth run


def test_a_run_pushing_to_its_thread_is_bound_by_the_pair_quota(
    d: DaemonProcess, work: Path
) -> None:
    source = thread(d, work, "source", agent=None)
    call(d, "thread/push", {"threadId": source, "text": "go", "source": "person",
                            "agent": "burst"})  # fmt: skip
    log = work / "burst.log"
    wait_for(lambda: log.exists() and log.read_text().count("exit") == 7, 180, what="7 pushes")
    text = log.read_text()
    assert text.count("exit 0") == 6 and text.count("exit 1") == 1, text
    assert "HANDOFF_RATE_LIMITED" in text, text
    # a person's pushes are not a loop: they are not counted
    call(d, "thread/push", {"threadId": source, "text": "by hand", "source": "person"})
