"""kill -9 of alpd while a root pins, exits and is settled (docs/contract.md, invariants 4 and
8). Each cycle starts a headless root that pins (retrying while the daemon is down) and
exits, then kills alpd with SIGKILL after a random small delay — before, during or after the
settle that projects the root's checkpoint into the next snapshot. With alpd dead, the
database (SQLite's file, or PostgreSQL's: the test runs on both) must hold the thread at
revision n or n+1, whole: the revision log, the snapshot rows and the chain agree, and the
root is settled exactly when its projection exists. After a restart alpd adopts or
reconciles the run and the thread ends at n+1 with the root's pin in it.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import pytest
from thread_whole import inspect_whole

from alpd.testing.daemon import DaemonProcess, running_daemon

pytestmark = pytest.mark.chaos

CYCLES = 12
SEED = 20261130
#: roots timed before the cycles; the fastest is the span the kills are placed around (the
#: first root of a fresh daemon can be several times slower than the rest)
CALIBRATIONS = 3


def wait_settled(d: DaemonProcess, execution_id: str, timeout: float = 30.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        execution: dict[str, Any] = d.call("execution/show", {"executionId": execution_id})
        if execution["status"] == "settled":
            return execution
        time.sleep(0.05)
    raise AssertionError(f"{execution_id} did not settle after the restart")


@pytest.mark.both_stores
def test_kill9_during_settle_leaves_thread_at_n_or_n_plus_1_whole(
    tmp_path: Path, store_url: str | None
) -> None:
    rng = random.Random(SEED)
    work = tmp_path / "work"
    work.mkdir()
    env = {"ALP_STORE_URL": store_url} if store_url else {}
    with running_daemon(tmp_path, extra_env=env) as d:
        thread_id = d.call("thread/create", {"title": "chaos", "cwd": str(work)})["id"]

        def start_root(marker: str) -> str:
            script = (
                f"i=0; until alp context pin decision -- '{marker}' 2>/dev/null; do "
                "i=$((i+1)); [ $i -gt 300 ] && exit 9; sleep 0.05; done; exit 0"
            )
            started = d.call(
                "thread/continue",
                {"threadId": thread_id, "runtime": "command", "headless": True,
                 "args": ["sh", "-c", script], "cwd": str(work)},
            )  # fmt: skip
            return str(started["execution"]["id"])

        # Calibrate: how long from `continue` to settled on this (shared, loaded) machine,
        # so that the kills land around the settle rather than always after it.
        spans = []
        for _ in range(CALIBRATIONS):
            begin = time.monotonic()
            calibration = d.call("execution/wait", {"executionId": start_root("calibration")})
            spans.append(time.monotonic() - begin)
            assert calibration["status"] == "settled"
        span = min(spans)
        seen_before_settle = 0
        for cycle in range(CYCLES):
            n = cycle + CALIBRATIONS
            marker = f"decision of cycle {cycle}"
            root_id = start_root(marker)
            time.sleep(rng.uniform(0.1, 1.3) * span)
            d.kill9()
            revision, roots = inspect_whole(d, thread_id)
            assert revision in (n, n + 1), (cycle, revision)
            assert (roots[root_id] == "settled") == (revision == n + 1)
            seen_before_settle += revision == n
            d.start()
            root = wait_settled(d, root_id)
            assert (root["outcome"], root["exitCode"]) == ("completed", 0), root
            context = d.call("thread/context", {"threadId": thread_id})  # verifies the chain
            assert context["revision"] == n + 1
            snapshot = context["snapshot"]
            assert [x["text"] for x in snapshot["decisions"]][-1] == marker
            assert snapshot["outcomes"][-1]["sourceExecutionId"] == root_id
            assert snapshot["degraded"] is False
            d.stop()
            assert inspect_whole(d, thread_id)[0] == n + 1
            d.start()
        # The random delays did hit before the settle at least once (else this test is weak).
        assert seen_before_settle >= 1
        shown = d.call("thread/show", {"threadId": thread_id})
        assert [r["sequence"] for r in shown["roots"]] == list(range(1, CYCLES + CALIBRATIONS + 1))
        assert shown["context"]["revision"] == CYCLES + CALIBRATIONS
