"""Very short interactive runs (issue 21, point 20): a run whose process exited 0 is
`completed` and `alp` exits 0, whoever looks at the root first — the client settling it with
its exit status, or reconcile (the daemon's tick, a `thread/show`, a `thread/reconcile`)."""

from __future__ import annotations

import threading
from pathlib import Path

from daemons import cli_json, roots

from alpd.testing.daemon import DaemonProcess

RUNS = 20


def test_twenty_very_short_interactive_runs_all_complete_while_reconcile_runs_all_the_time(
    d: DaemonProcess, work: Path
) -> None:
    thread = cli_json(d, "thread", "create", cwd=work)
    stop = threading.Event()
    reconciled = 0

    def reconcile_all_the_time() -> None:
        # A reconcile at any moment: between the run's exit and its client's settle too.
        nonlocal reconciled
        with d.client() as client:
            while not stop.is_set():
                client.call("thread/reconcile", {"threadId": thread["id"]})
                reconciled += 1

    hammer = threading.Thread(target=reconcile_all_the_time)
    hammer.start()
    try:
        results = [
            d.cli("thread", "continue", thread["id"], "--runtime", "command", "--", "true",
                  cwd=str(work))
            for _ in range(RUNS)
        ]  # fmt: skip
    finally:
        stop.set()
        hammer.join(30)
    assert reconciled > RUNS
    assert [r.returncode for r in results] == [0] * RUNS, [r.stderr for r in results]
    shown = roots(d, thread["id"])
    assert len(shown) == RUNS
    assert [(r["status"], r["outcome"], r["exitCode"]) for r in shown] == [
        ("settled", "completed", 0)
    ] * RUNS
