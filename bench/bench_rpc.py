"""alpd's request path against its floors, measured in the same run.

(a) `daemon/ping`, sequential round trips on one connection from a blocking stdlib client,
    against `bench.minimal_server` (uvloop + msgspec, nothing else). Goal: alpd reaches at
    least half the floor's throughput. Rounds alternate between the two servers.
(b) `alp thread list --json` wall time (start Python, connect, one call, print) against a
    stdlib raw-socket client making the same call with the same interpreter. Goal: at most
    1.5× the floor. Runs are interleaved, medians over RUNS of each.

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

ROUNDS = int(os.environ.get("ALP_BENCH_ROUNDS", "6"))
CALLS = int(os.environ.get("ALP_BENCH_CALLS", "3000"))
WARMUP = 300
RUNS = int(os.environ.get("ALP_BENCH_RUNS", "25"))
PING = b'{"jsonrpc":"2.0","id":1,"method":"daemon/ping"}\n'

# The floor of (b): what a CLI call costs with nothing but the stdlib.
RAW_CLIENT = r"""
import json, os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(os.environ["ALP_SOCKET"])
params = {"cwd": os.getcwd(), "all": False}
s.sendall(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "thread/list",
                      "params": params}).encode() + b"\n")
buf = b""
while not buf.endswith(b"\n"):
    buf += s.recv(65536)
json.dump(json.loads(buf)["result"], sys.stdout, separators=(",", ":"))
sys.stdout.write("\n")
"""


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


def timed(command: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, timeout=60)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise RuntimeError(f"{command[:2]} failed: {done.stderr.decode(errors='replace')}")
    return elapsed


def bench_cli(env: dict[str, str], cwd: Path, label: str, goal: str) -> list[Result]:
    alp = Path(sys.executable).with_name("alp")
    commands = {
        "alp": [str(alp), "thread", "list", "--json"],
        "raw": [sys.executable, "-c", RAW_CLIENT],
    }
    outputs = {
        name: subprocess.run(command, env=env, cwd=cwd, capture_output=True).stdout
        for name, command in commands.items()
    }
    if outputs["alp"] != outputs["raw"]:
        raise RuntimeError(f"the two clients disagree: {outputs}")
    times: dict[str, list[float]] = {name: [] for name in commands}
    for run in range(RUNS):
        names = list(commands) if run % 2 == 0 else list(commands)[::-1]
        for name in names:
            times[name].append(timed(commands[name], env, cwd))
    ours = statistics.median(times["alp"])
    floor = statistics.median(times["raw"])
    return [Result(f"alp thread list --json, {label}", ours, "ms", floor, ours / floor, goal)]


def with_bytecode_cache(env: dict[str, str], prefix: Path) -> dict[str, str]:
    """As installed: .pyc files exist. An editable checkout under PYTHONDONTWRITEBYTECODE=1
    (this machine's default) has none for alp's own modules, so every CLI call would
    recompile them; a private cache prefix gives both clients compiled bytecode after the
    first call without writing into the checkout."""
    cached = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cached["PYTHONPYCACHEPREFIX"] = str(prefix)
    return cached


def run() -> list[Result]:
    with tempfile.TemporaryDirectory(prefix="alp-bench-") as scratch:
        base = Path(scratch)
        workspace = base / "workspace"
        workspace.mkdir()
        with running_daemon(base) as daemon, minimal_server(base) as floor_socket:
            with daemon.client() as client:
                for n in range(20):
                    client.call("thread/create", {"title": f"bench {n}", "cwd": str(workspace)})
            results = bench_ping(daemon.socket_path, floor_socket)
            cached = with_bytecode_cache(daemon.env, base / "pycache")
            results += bench_cli(cached, workspace, ".pyc cached (installed)", "<= 1.5")
            if daemon.env.get("PYTHONDONTWRITEBYTECODE"):
                results += bench_cli(daemon.env, workspace, "no .pyc (this checkout)", "")
    return results
