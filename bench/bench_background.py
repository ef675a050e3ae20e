"""Background work: what `daemon/ps` costs on a full home, and what an idle scheduler costs.

(a) `daemon/ps` p50 on one connection, with 1,000 threads, 100 schedules (20 of them with a
    run behind them) and 20 running roots, against `daemon/ping` on the same connection in
    the same rounds (the floor: a round trip that reads nothing). Goal: p50 under 5 ms, so
    the second row's ratio is p50 / 5 ms.
(b) The scheduler's idle wake-ups: CPU time (user + system, psutil) of two idle alpds with
    1,000 threads each, over the same window, one with 100 active schedules (next fires an
    hour away or more), one with none. Their difference, in % of one core, is what the
    schedules cost. Goal: < 1%.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

import psutil

from alpd.testing.daemon import DaemonProcess, running_daemon
from bench import Result

THREADS = 1000
SCHEDULES = 100
RUNNING = 20
ROUNDS = int(os.environ.get("ALP_BENCH_ROUNDS", "6"))
CALLS = int(os.environ.get("ALP_BENCH_PS_CALLS", "200"))
IDLE_SECONDS = float(os.environ.get("ALP_BENCH_IDLE_SECONDS", "30"))
PS_BUDGET_MS = 5.0
SETTLE_SECONDS = 15.0

CONFIG = """
[agents.tick]
runtime = "command"
args = ["true"]
"""
BLOCKER = ["sh", "-c", "while [ ! -f release ]; do sleep 0.5; done"]


def make_threads(daemon: DaemonProcess, workspace: Path) -> list[str]:
    with daemon.client() as client:
        return [
            client.call("thread/create", {"title": f"bench {n}", "cwd": str(workspace)})["id"]
            for n in range(THREADS)
        ]


def make_schedules(daemon: DaemonProcess, threads: list[str]) -> None:
    with daemon.client() as client:
        for n in range(SCHEDULES):
            rule = {"every": "1h"} if n % 2 else {"cron": f"{n % 60} 3 * * *", "timezone": "UTC"}
            created = client.call(
                "schedule/create",
                {"threadId": threads[n], "prompt": f"job {n}", "agent": "tick", **rule},
            )
            if n < RUNNING:
                client.call("schedule/run", {"scheduleId": created["id"]})


def start_roots(daemon: DaemonProcess, threads: list[str], workspace: Path) -> None:
    with daemon.client() as client:
        for thread_id in threads[-RUNNING:]:
            client.call(
                "thread/continue",
                {
                    "threadId": thread_id,
                    "runtime": "command",
                    "headless": True,
                    "args": BLOCKER,
                    "cwd": str(workspace),
                },
            )


def timed_calls(daemon: DaemonProcess, method: str, calls: int) -> list[float]:
    with daemon.client() as client:
        client.call(method)
        latencies = []
        for _ in range(calls):
            started = time.perf_counter()
            client.call(method)
            latencies.append((time.perf_counter() - started) * 1000)
    return latencies


def bench_ps(daemon: DaemonProcess) -> list[Result]:
    ps = daemon.call("daemon/ps")
    assert isinstance(ps, dict)
    if len(ps["jobs"]) != RUNNING or len(ps["schedules"]) != SCHEDULES:
        raise RuntimeError(f"{len(ps['jobs'])} jobs, {len(ps['schedules'])} schedules")
    samples: dict[str, list[float]] = {"daemon/ps": [], "daemon/ping": []}
    for round_number in range(ROUNDS):
        order = list(samples) if round_number % 2 == 0 else list(samples)[::-1]
        for method in order:
            samples[method] += timed_calls(daemon, method, CALLS)
    ours = statistics.median(samples["daemon/ps"])
    floor = statistics.median(samples["daemon/ping"])
    label = f"{THREADS} threads, {SCHEDULES} schedules, {RUNNING} running"
    return [
        Result(f"daemon/ps p50 vs ping, {label}", ours, "ms", floor, ours / floor, ""),
        Result(
            "daemon/ps p50 vs its 5 ms budget",
            ours,
            "ms",
            PS_BUDGET_MS,
            ours / PS_BUDGET_MS,
            "<= 1",
        ),
    ]


def cpu_seconds(pid: int) -> float:
    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


def bench_idle(with_schedules: DaemonProcess, without: DaemonProcess) -> list[Result]:
    time.sleep(SETTLE_SECONDS)  # start-up work (thread documents indexed, first passes) ends
    before = {d.pid: cpu_seconds(d.pid) for d in (with_schedules, without)}
    started = time.monotonic()
    time.sleep(IDLE_SECONDS)
    elapsed = time.monotonic() - started
    used = {pid: (cpu_seconds(pid) - cpu) / elapsed * 100 for pid, cpu in before.items()}
    ours, floor = used[with_schedules.pid], used[without.pid]
    extra = max(ours - floor, 0.0)
    return [
        Result(
            f"idle alpd CPU, {SCHEDULES} schedules vs none ({IDLE_SECONDS:.0f} s)",
            ours,
            "% core",
            floor,
            ours / floor if floor else None,
            "",
        ),
        Result("scheduler idle cost vs 1% of a core", extra, "% core", 1.0, extra / 1.0, "<= 1"),
    ]


def run() -> list[Result]:
    with tempfile.TemporaryDirectory(prefix="alp-bench-") as scratch:
        base = Path(scratch)
        results: list[Result] = []
        homes = {name: base / name for name in ("full", "empty")}
        for home in homes.values():
            (home / "workspace").mkdir(parents=True)
            (home / "config.toml").write_text(CONFIG)
        with (
            running_daemon(
                homes["full"], extra_args=["--config", str(homes["full"] / "config.toml")]
            ) as full,
            running_daemon(
                homes["empty"], extra_args=["--config", str(homes["empty"] / "config.toml")]
            ) as empty,
        ):
            try:
                threads = make_threads(full, homes["full"] / "workspace")
                make_threads(empty, homes["empty"] / "workspace")
                make_schedules(full, threads)
                results += bench_idle(full, empty)
                start_roots(full, threads, homes["full"] / "workspace")
                results += bench_ps(full)
            finally:
                (homes["full"] / "workspace" / "release").touch()
    return results
