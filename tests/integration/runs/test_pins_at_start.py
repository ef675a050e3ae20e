"""A pin from a headless run's own process is accepted from its first instruction (issue 21,
point 22): the run is spawned while its root is still `reserved`, and the daemon may not have
recorded its pid yet when the pin arrives."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from daemons import cli_json, settled, start_headless, thread_show

from alpd.testing.daemon import DaemonProcess

ROOTS = 12


def test_twelve_headless_roots_started_in_parallel_each_pinning_at_once_all_pins_are_projected(
    d: DaemonProcess, work: Path
) -> None:
    threads = [cli_json(d, "thread", "create", cwd=work)["id"] for _ in range(ROOTS)]

    def start(index: int) -> dict[str, object]:
        # The run's very first instruction is the pin (no shell before it).
        pin = [sys.executable, "-m", "alpctl", "context", "pin", "decision", "--", f"pin {index}"]
        return start_headless(d, threads[index], work, pin)

    with ThreadPoolExecutor(ROOTS) as pool:
        started = list(pool.map(start, range(ROOTS)))
    ended = [settled(d, str(execution["id"])) for execution in started]
    assert [(e["outcome"], e["exitCode"]) for e in ended] == [("completed", 0)] * ROOTS, [
        e.get("outputTail") for e in ended
    ]
    for index, (thread_id, execution) in enumerate(zip(threads, started, strict=True)):
        decisions = thread_show(d, thread_id)["context"]["snapshot"]["decisions"]
        assert [(x["text"], x["sourceExecutionId"]) for x in decisions] == [
            (f"pin {index}", execution["id"])
        ]
