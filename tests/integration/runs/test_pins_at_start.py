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


def test_a_run_whose_shell_lost_path_still_finds_alp_through_alp_bin(
    d: DaemonProcess, work: Path
) -> None:
    """`ALP_BIN` names alp by its absolute path (issue 21, point 19): a shell whose PATH was
    reset (a login shell's profile) still reaches it."""
    thread_id = cli_json(d, "thread", "create", cwd=work)["id"]
    script = (
        'test -x "$ALP_BIN" && '
        'env -i PATH=/usr/bin:/bin ALP_SOCKET="$ALP_SOCKET" '
        '"$ALP_BIN" context pin decision -- "found through ALP_BIN"'
    )
    execution = start_headless(d, thread_id, work, ["sh", "-c", script])
    ended = settled(d, str(execution["id"]))
    assert (ended["outcome"], ended["exitCode"]) == ("completed", 0), ended.get("outputTail")
    decisions = thread_show(d, thread_id)["context"]["snapshot"]["decisions"]
    assert [x["text"] for x in decisions] == ["found through ALP_BIN"]
