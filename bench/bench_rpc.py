"""alpd's request path against its floor, measured in the same run.

`daemon/ping`, sequential round trips on one connection from a blocking stdlib client, against
`bench.minimal_server` (uvloop + msgspec, nothing else). Goal: alpd reaches at least half the
floor's throughput. Rounds alternate between the two servers. (The CLI's figures are in
`bench_cli`, measured on an installed alp.)

Sequential ping-pong on this 2-vCPU VM is bimodal (both ends on one vCPU or not), so the
rounds alternate and the figures are medians; single runs mean little.
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alpd.testing.daemon import running_daemon
from bench import Result
from bench.install import installed

ROUNDS = int(os.environ.get("ALP_BENCH_ROUNDS", "6"))
CALLS = int(os.environ.get("ALP_BENCH_CALLS", "3000"))
WARMUP = 300
PING = b'{"jsonrpc":"2.0","id":1,"method":"daemon/ping"}\n'


def ping_round(path: Path, calls: int) -> tuple[list[float], float]:
    """Per-call latencies (µs) and the elapsed time (s) of `calls` sequential pings."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(str(path))
        send, recv = sock.sendall, sock.recv
        for _ in range(WARMUP):
            send(PING)
            while not recv(65536).endswith(b"\n"):
                pass
        latencies = []
        clock = time.perf_counter_ns
        started = clock()
        for _ in range(calls):
            before = clock()
            send(PING)
            while not recv(65536).endswith(b"\n"):
                pass
            latencies.append((clock() - before) / 1000)
        return latencies, (clock() - started) / 1e9


@contextmanager
def minimal_server(directory: Path) -> Iterator[Path]:
    path = directory / "minimal.sock"
    process = subprocess.Popen(
        [sys.executable, "-m", "bench.minimal_server", str(path)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "ready"
        yield path
    finally:
        process.terminate()
        process.wait(10)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def bench_ping(alpd_socket: Path, floor_socket: Path) -> list[Result]:
    latencies: dict[str, list[float]] = {"alpd": [], "floor": []}
    throughput: dict[str, list[float]] = {"alpd": [], "floor": []}
    for round_number in range(ROUNDS):
        order = [("alpd", alpd_socket), ("floor", floor_socket)]
        for name, path in order if round_number % 2 == 0 else order[::-1]:
            lat, elapsed = ping_round(path, CALLS)
            latencies[name] += lat
            throughput[name].append(CALLS / elapsed)
    alpd_rate = statistics.median(throughput["alpd"])
    floor_rate = statistics.median(throughput["floor"])
    results = [
        Result(
            "daemon/ping sequential, 1 conn",
            alpd_rate,
            "calls/s",
            floor_rate,
            alpd_rate / floor_rate,
            ">= 0.5",
        )
    ]
    for label, fraction in (("p50", 0.5), ("p99", 0.99)):
        ours = percentile(latencies["alpd"], fraction)
        floor = percentile(latencies["floor"], fraction)
        results.append(Result(f"daemon/ping {label}", ours, "µs", floor, ours / floor, ""))
    return results


def run() -> list[Result]:
    alp = installed()
    with tempfile.TemporaryDirectory(prefix="alp-bench-") as scratch:
        base = Path(scratch)
        with (
            running_daemon(base, python=alp.python) as daemon,
            minimal_server(base) as floor_socket,
        ):
            return bench_ping(daemon.socket_path, floor_socket)
