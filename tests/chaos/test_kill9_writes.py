"""kill -9 of alpd in the middle of a stream of writes loses no acknowledged write.

Each cycle: several clients create threads as fast as the daemon acknowledges them and
record every acknowledged id; once 300 to 450 writes have been acknowledged (more are in
flight at that moment) the daemon gets SIGKILL at an arbitrary point of its write path.
Then, with the daemon down, `PRAGMA integrity_check` must say ok and every acknowledged id
must be in the database; after a restart the daemon must serve them too.

The work is counted, not timed: a fixed number of cycles, each a fixed range of writes.
That range is what makes every cycle cover the three write paths a crash can hit: commits
appended to the WAL (with writes in flight at the kill), the WAL checkpoint into the main
file (SQLite's default runs one every 1,000 WAL pages; a thread/create commits about 7),
and recovery of the killed daemon's WAL on restart. A cycle whose kill came before any
checkpoint fails, since it would have covered only the first path; the spread of 150 writes
(more than one checkpoint's worth) moves the kill around the checkpoint.

The same stream and kills run with the store on PostgreSQL too (a private cluster,
tests/postgres_cluster.py): every acknowledged write is in the database after each kill and
served after the restart.

Cycles: `ALP_CHAOS_CYCLES` (default 12; `make chaos` runs 200).
"""

from __future__ import annotations

import os
import random
import sqlite3
import threading
import time
from pathlib import Path

import pytest
from postgres_cluster import Cluster

from alpctl.client import Client, DaemonUnreachable, RpcError
from alpd.testing.daemon import DaemonProcess, running_daemon

pytestmark = pytest.mark.chaos

CYCLES = int(os.environ.get("ALP_CHAOS_CYCLES", "12"))
WRITERS = 6
ACKS_BEFORE_KILL = 300
ACKS_SPREAD = 150


class Writers:
    """Client threads creating threads until the daemon dies under them."""

    def __init__(self, daemon: DaemonProcess, cycle: int) -> None:
        self.daemon = daemon
        self.cycle = cycle
        self.acknowledged: list[str] = []
        self.failures: list[BaseException] = []
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._write, args=(n,), daemon=True) for n in range(WRITERS)
        ]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def join(self) -> None:
        for thread in self._threads:
            thread.join(30)
            assert not thread.is_alive(), "a writer hung after the daemon died"

    def count(self) -> int:
        with self._lock:
            return len(self.acknowledged)

    def _write(self, writer: int) -> None:
        try:
            client = Client.connect(self.daemon.socket_path)
        except DaemonUnreachable:
            return
        try:
            serial = 0
            while True:
                serial += 1
                title = f"c{self.cycle}-w{writer}-{serial}"
                try:
                    thread = client.call("thread/create", {"title": title})
                except (DaemonUnreachable, ValueError):
                    return  # the daemon died: this write was never acknowledged
                except RpcError as exc:  # any error reply is a failure of the test
                    self.failures.append(exc)
                    return
                with self._lock:
                    self.acknowledged.append(thread["id"])
        finally:
            client.close()


def stored_ids(db_path: Path, wanted: list[str]) -> set[str]:
    """Integrity-check the database (daemon down) and return which of `wanted` it holds."""
    db = sqlite3.connect(db_path, isolation_level=None)
    try:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        present: set[str] = set()
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = db.execute(
                f"SELECT id, revision, status FROM threads WHERE id IN ({marks})", chunk
            ).fetchall()
            assert all(rev == 1 and status == "open" for _, rev, status in rows)
            present |= {row[0] for row in rows}
        return present
    finally:
        db.close()


def test_kill9_during_writes_loses_no_acknowledged_write(tmp_path: Path) -> None:
    rng = random.Random(os.environ.get("ALP_CHAOS_SEED", "alp"))
    all_acknowledged: list[str] = []
    with running_daemon(tmp_path) as daemon:
        for cycle in range(CYCLES):
            checkpointed_size = (daemon.home / "alp.db").stat().st_size
            writers = Writers(daemon, cycle)
            writers.start()
            target = ACKS_BEFORE_KILL + rng.randrange(0, ACKS_SPREAD)
            deadline = time.monotonic() + 60
            while writers.count() < target:
                assert time.monotonic() < deadline, "the daemon stopped acknowledging writes"
                assert not writers.failures, writers.failures
                time.sleep(0.002)
            time.sleep(rng.random() * 0.01)
            daemon.kill9()
            writers.join()
            assert not writers.failures, writers.failures
            acknowledged = list(writers.acknowledged)
            # only a checkpoint writes to the main file, and this cycle's rows make it grow
            assert (daemon.home / "alp.db").stat().st_size > checkpointed_size, (
                f"cycle {cycle}: no checkpoint ran before the kill"
            )
            all_acknowledged += acknowledged
            present = stored_ids(daemon.home / "alp.db", acknowledged)
            missing = set(acknowledged) - present
            assert not missing, f"cycle {cycle}: {len(missing)} acknowledged writes lost"
            daemon.start()
            served = daemon.call("thread/list", {"all": True, "limit": 10_000})
            assert isinstance(served, dict)
            assert set(acknowledged) <= {t["id"] for t in served["threads"]}
        daemon.stop()
        assert stored_ids(daemon.home / "alp.db", all_acknowledged) == set(all_acknowledged)
    assert len(all_acknowledged) >= CYCLES * ACKS_BEFORE_KILL


@pytest.mark.postgres
def test_kill9_during_writes_on_postgresql_loses_no_acknowledged_write(
    tmp_path: Path, postgres_cluster: Cluster
) -> None:
    """The same stream of writes and kills with the store on PostgreSQL (a write is
    acknowledged after its COMMIT returned): every acknowledged thread is in the database
    after each kill, whole (revision 1, open), and served after the restart. No checkpoint
    to cover here: the server, not alpd, owns the files; what alpd's kill can break is a
    transaction it had in flight, which the server rolls back when the connection drops."""
    import psycopg

    store_url = postgres_cluster.new_database()

    def stored(wanted: list[str]) -> set[str]:
        with psycopg.connect(store_url) as conn:
            rows = conn.execute(
                "SELECT id, revision, status FROM threads WHERE id = ANY(%s)", (wanted,)
            ).fetchall()
        assert all(rev == 1 and status == "open" for _, rev, status in rows)
        return {row[0] for row in rows}

    rng = random.Random(os.environ.get("ALP_CHAOS_SEED", "alp"))
    all_acknowledged: list[str] = []
    cycles = CYCLES
    with running_daemon(tmp_path, extra_env={"ALP_STORE_URL": store_url}) as daemon:
        for cycle in range(cycles):
            writers = Writers(daemon, cycle)
            writers.start()
            target = ACKS_BEFORE_KILL + rng.randrange(0, ACKS_SPREAD)
            deadline = time.monotonic() + 90
            while writers.count() < target:
                assert time.monotonic() < deadline, "the daemon stopped acknowledging writes"
                assert not writers.failures, writers.failures
                time.sleep(0.002)
            time.sleep(rng.random() * 0.01)
            daemon.kill9()
            writers.join()
            assert not writers.failures, writers.failures
            acknowledged = list(writers.acknowledged)
            all_acknowledged += acknowledged
            missing = set(acknowledged) - stored(acknowledged)
            assert not missing, f"cycle {cycle}: {len(missing)} acknowledged writes lost"
            daemon.start()
            served = daemon.call("thread/list", {"all": True, "limit": 10_000})
            assert isinstance(served, dict)
            assert set(acknowledged) <= {t["id"] for t in served["threads"]}
        daemon.stop()
    assert stored(all_acknowledged) == set(all_acknowledged)
    assert len(all_acknowledged) >= cycles * ACKS_BEFORE_KILL
    postgres_cluster.drop_database(store_url)
