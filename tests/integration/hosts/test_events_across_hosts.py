"""Events across hosts (docs/many-machines.md): two real alpd (two homes, two instances) on ONE
PostgreSQL database. A subscriber on host A sees host B's threads made, roots reserved, run
and settled, pushes, handoffs and reports within a second, each once, in B's order; a
subscriber on B sees B's own events once (never echoed back); after A's LISTEN connection is
cut, A listens again after its back-off and hears B's events again; events A sends while B's
LISTEN connection is cut again and again reach B's subscriber all the same, once each and in
A's order, read back from the database's log when B listens again."""

from __future__ import annotations

import queue
import re
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import psycopg
import pytest
from handoff_threads import handoff_config
from polling import wait_for
from postgres_cluster import Cluster, admin_url

from alpd.domain.hosts.crossing import CROSSING
from alpd.testing.daemon import DaemonProcess, running_daemon

pytestmark = pytest.mark.postgres

#: the issue's bound: a subscriber on A sees B's event within this many seconds
WITHIN = 1.0
#: after the last event, how long a subscriber is listened to for one more (a duplicate)
QUIET = 1.5


@pytest.fixture
def database(postgres_cluster: Cluster) -> Iterator[str]:
    url = postgres_cluster.new_database()
    yield url
    postgres_cluster.drop_database(url)


@pytest.fixture
def hosts(tmp_path: Path, database: str) -> Iterator[tuple[DaemonProcess, DaemonProcess, Path]]:
    work = tmp_path / "work"
    work.mkdir()
    with ExitStack() as stack:
        daemons = []
        for name in ("a", "b"):
            base = tmp_path / name
            (base / "home").mkdir(parents=True, mode=0o700)
            config = f'[host]\nname = "host-{name}"\n' + handoff_config(work)
            (base / "config.toml").write_text(config)
            daemons.append(
                stack.enter_context(
                    running_daemon(
                        base,
                        extra_env={"ALP_STORE_URL": database},
                        extra_args=["--config", str(base / "config.toml")],
                    )
                )
            )
        for d in daemons:
            wait_for(lambda d=d: events_task(d) == "listening", what="the events listener")
        yield daemons[0], daemons[1], work


def events_task(d: DaemonProcess) -> str | None:
    status = d.call("daemon/status")
    assert isinstance(status, dict)
    states = {t["name"]: t["state"] for t in status["tasks"]}
    return states.get("events")


class Subscriber:
    """A connection subscribed to every notification that crosses hosts; what it hears,
    with the monotonic time it arrived, read on a thread of its own."""

    def __init__(self, d: DaemonProcess) -> None:
        self.client = d.client().__enter__()
        self.client.call("events/subscribe", {"events": sorted(CROSSING)})
        self.heard: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            for note in self.client.notifications():
                self.heard.put((time.monotonic(), note))
        except Exception:
            return

    def wait(self, method: str, key: str, change: str | None = None) -> float:
        """When the notification of `method` about row `key` (and `change`) arrived."""
        deadline = time.monotonic() + 15
        while True:
            at, note = self.heard.get(timeout=max(0.01, deadline - time.monotonic()))
            self.seen.append(note)
            if about(note) == (method, key, change if change is not None else about(note)[2]):
                return at

    def drain(self) -> list[dict[str, Any]]:
        """Every notification heard, after `QUIET` seconds without one."""
        while True:
            try:
                self.seen.append(self.heard.get(timeout=QUIET)[1])
            except queue.Empty:
                return self.seen

    @property
    def seen(self) -> list[dict[str, Any]]:
        if not hasattr(self, "_seen"):
            self._seen: list[dict[str, Any]] = []
        return self._seen

    def close(self) -> None:
        self.client.__exit__(None, None, None)


def about(note: dict[str, Any]) -> tuple[str, str, str | None]:
    """(method, the row's id, change) of a notification."""
    method = note["method"]
    row = note["params"][CROSSING[method][0]]
    return method, str(row["id"]), note["params"].get("change")


def call(d: DaemonProcess, method: str, params: dict[str, Any]) -> dict[str, Any]:
    result = d.call(method, params)
    assert isinstance(result, dict)
    return result


def test_a_subscriber_on_one_host_sees_the_other_hosts_events_once_within_a_second(
    hosts: tuple[DaemonProcess, DaemonProcess, Path],
) -> None:
    a, b, work = hosts
    on_a, on_b = Subscriber(a), Subscriber(b)
    try:
        made = call(b, "thread/create", {"title": "build", "cwd": str(work)})
        asked = time.monotonic()
        assert on_a.wait("thread/changed", made["id"], "created") - asked < WITHIN
        research = call(b, "thread/create", {"title": "research", "cwd": str(work)})["id"]

        # a push starts a root on B: A hears it reserved, then settled
        pushed = call(b, "thread/push", {"threadId": made["id"], "text": "go", "source": "ci",
                                         "agent": "watch"})  # fmt: skip
        root, asked = pushed["execution"]["id"], time.monotonic()
        assert on_a.wait("execution/changed", root, "reserved") - asked < WITHIN
        done = call(b, "execution/wait", {"executionId": root, "timeout": 30})
        assert done["status"] == "settled"
        asked = time.monotonic()
        assert on_a.wait("execution/changed", root, "settled") - asked < WITHIN

        # a handoff wakes the idle thread: A hears it delivered
        sent = call(b, "handoff/send", {"target": "build", "summary": "numbers are in",
                                        "from": "research"})  # fmt: skip
        asked = time.monotonic()
        assert on_a.wait("handoff/delivered", sent["handoff"]["id"]) - asked < WITHIN
        woken = sent["execution"]["id"]
        call(b, "execution/wait", {"executionId": woken, "timeout": 30})

        heard_on_a, heard_on_b = on_a.drain(), on_b.drain()
    finally:
        on_a.close()
        on_b.close()
    told = [about(n) for n in heard_on_b]
    # A's subscriber had B's events, in B's order, none twice and none left out (two alike in
    # a row, a thread settled by two roots, are two events)...
    assert [about(n) for n in heard_on_a] == told
    # ...and B's own had each once: none came back to it from the database
    unique = [("thread/changed", made["id"], "created")]
    unique.append(("handoff/delivered", sent["handoff"]["id"], None))
    unique += [("execution/changed", x, c) for x in (root, woken) for c in ("reserved", "settled")]
    for once in unique:
        assert told.count(once) == 1, once
    kinds = {(method, change) for method, _, change in told}
    assert {("execution/changed", "reserved"), ("execution/changed", "settled"),
            ("thread/changed", "created"), ("handoff/delivered", None),
            ("thread/report", None)} <= kinds  # fmt: skip
    report = next(n for n in heard_on_a if n["method"] == "thread/report")
    assert report["params"]["threadTitle"] in {"build", "research"}
    settled = next(n for n in heard_on_a if about(n) == ("execution/changed", root, "settled"))
    assert settled["params"]["execution"]["status"] == "settled"
    assert settled["params"]["execution"]["hostName"] == "host-b"
    assert research  # made on B, heard on A above


def listeners(admin: psycopg.Connection[Any]) -> list[int]:
    """The server pids of the connections that LISTEN."""
    rows = admin.execute(
        "SELECT pid FROM pg_stat_activity "
        "WHERE datname = current_database() AND query LIKE 'LISTEN %'"
    ).fetchall()
    return [int(row[0]) for row in rows]


def test_events_heard_again_after_the_listening_connection_is_cut(
    hosts: tuple[DaemonProcess, DaemonProcess, Path], database: str
) -> None:
    a, b, work = hosts
    with psycopg.connect(admin_url(database), autocommit=True) as admin:
        cut = set(listeners(admin))
        assert len(cut) == 2  # one listener per host
        for pid in cut:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        wait_for(lambda: len(set(listeners(admin)) - cut) == 2, what="both hosts listening again")
    on_a = Subscriber(a)
    try:
        made = call(b, "thread/create", {"title": "after the cut", "cwd": str(work)})
        asked = time.monotonic()
        assert on_a.wait("thread/changed", made["id"], "created") - asked < WITHIN
    finally:
        on_a.close()
    status = a.call("daemon/status")
    assert isinstance(status, dict)
    events = next(t for t in status["tasks"] if t["name"] == "events")
    assert events["detail"].startswith("across hosts on alp:")


def b_listener_cut_while(database: str, stop: threading.Event, cuts: list[int]) -> None:
    """Until `stop`: terminate host B's LISTEN connection (named `alpd events host-b`) each
    time it is there, every 5 ms, counting the cuts."""
    with psycopg.connect(database, autocommit=True) as admin:
        while not stop.is_set():
            rows = admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = 'alpd events host-b'"
            ).fetchall()
            cuts.extend(1 for row in rows if row[0])
            time.sleep(0.005)


def test_events_sent_while_a_hosts_listener_is_down_are_replayed_once_in_order(
    hosts: tuple[DaemonProcess, DaemonProcess, Path], database: str
) -> None:
    a, b, work = hosts
    on_a, on_b = Subscriber(a), Subscriber(b)
    stop, cuts = threading.Event(), list[int]()
    cutter = threading.Thread(target=b_listener_cut_while, args=(database, stop, cuts))
    cutter.start()
    try:
        wait_for(lambda: events_task(b) == "reconnecting", what="B's listener cut")
        # A's events while B cannot listen: a thread made, a push's root reserved and
        # settled, a handoff delivered, the thread it woke run, a report
        made = call(a, "thread/create", {"title": "build", "cwd": str(work)})
        call(a, "thread/create", {"title": "research", "cwd": str(work)})
        pushed = call(a, "thread/push", {"threadId": made["id"], "text": "go", "source": "ci",
                                         "agent": "watch"})  # fmt: skip
        call(a, "execution/wait", {"executionId": pushed["execution"]["id"], "timeout": 30})
        sent = call(a, "handoff/send", {"target": "build", "summary": "numbers are in",
                                        "from": "research"})  # fmt: skip
        call(a, "execution/wait", {"executionId": sent["execution"]["id"], "timeout": 30})
    finally:
        stop.set()
        cutter.join()
    try:
        wait_for(lambda: events_task(b) == "listening", what="B listening again")
        # A's own subscriber is read to the end too: a report can follow the root's settle
        heard_on_a, heard_on_b = on_a.drain(), on_b.drain()
    finally:
        on_a.close()
        on_b.close()
    assert cuts, "B's listener was never cut"
    told = [about(n) for n in heard_on_a]
    assert len(told) >= 8, told
    # each of A's events once, in A's order, though B was not listening when A sent them
    assert [about(n) for n in heard_on_b] == told
    status = b.call("daemon/status")
    assert isinstance(status, dict)
    events = next(t for t in status["tasks"] if t["name"] == "events")
    replayed = re.search(r"; (\d+) replayed", events["detail"])
    assert replayed is not None and int(replayed.group(1)) >= 1, events
