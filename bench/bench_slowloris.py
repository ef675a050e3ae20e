"""The owner's `daemon/ping` under a slowloris crowd on the Unix socket, against idle.

A separate process holds `CROWD` connections to alpd's socket, each sending one byte of a
frame that never ends every `TRICKLE` seconds (staggered), and opening a new connection
whenever alpd closes one (the frame deadline, idle close). Meanwhile the owner pings for
`DURATION` seconds: on one kept connection, and connect-ping-close rounds (what each `alp`
command does). The same pings are measured idle just before, on the same daemon, for as
long; `ROUNDS` such idle-then-crowd rounds are interleaved and the medians reported (the
machine's load comes and goes). Goal (issue 21, point 6): p99 under the crowd at most 2x idle.

Runs the checkout's alpd (the interpreter running the bench), on a temporary home.
"""

from __future__ import annotations

import multiprocessing
import os
import socket
import statistics
import sys
import tempfile
import time
from multiprocessing.synchronize import Event
from pathlib import Path

from alpd.testing.daemon import running_daemon
from bench import Result

CROWD = int(os.environ.get("ALP_BENCH_SLOWLORIS", "1000"))
TRICKLE = 1.0
#: seconds of pinging, idle and under the crowd each
DURATION = float(os.environ.get("ALP_BENCH_SLOWLORIS_SECONDS", "20"))
#: idle-then-crowd rounds, interleaved on one daemon
ROUNDS = int(os.environ.get("ALP_BENCH_SLOWLORIS_ROUNDS", "3"))
PACE = 0.002
WARMUP = 200
PING = b'{"jsonrpc":"2.0","id":1,"method":"daemon/ping"}\n'
HEAD = b'{"jsonrpc":"2.0","id":1,"method":"daemon/ping","params":{"pad":"'


def crowd(path: str, count: int, ready: Event, stop: Event) -> None:
    """The attacker: `count` connections trickling a byte each per TRICKLE seconds."""
    import selectors

    selector = selectors.DefaultSelector()
    socks: list[socket.socket | None] = [None] * count

    def open_one(i: int) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(path)
            sock.setblocking(False)
            sock.send(HEAD)
        except OSError:
            sock.close()
            socks[i] = None
            return
        socks[i] = sock
        selector.register(sock, selectors.EVENT_READ, i)

    for i in range(count):
        open_one(i)
    ready.set()
    step = TRICKLE / count
    i = 0
    next_at = time.monotonic()
    while not stop.is_set():
        # whatever alpd said (a FRAME_TIMEOUT, a close): reopen that slot
        for key, _ in selector.select(timeout=0):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            try:
                data = sock.recv(65536)
            except OSError:
                data = b""
            if not data:
                selector.unregister(sock)
                sock.close()
                open_one(key.data)
        sock = socks[i]
        if sock is None:
            open_one(i)
        else:
            try:
                sock.send(b"a")
            except OSError:
                selector.unregister(sock)
                sock.close()
                open_one(i)
        i = (i + 1) % count
        next_at += step
        delay = next_at - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    for sock in socks:
        if sock is not None:
            sock.close()


def measure(path: Path) -> dict[str, list[float]]:
    """Latencies (µs) for DURATION seconds: a ping on one kept connection every PACE seconds,
    and every tenth time a connect-ping-close round too (one `alp` call's socket part).
    Longer than alpd's frame deadline (10 s), so a crowd's reconnections fall inside."""
    out: dict[str, list[float]] = {"ping": [], "connect+ping": []}
    clock = time.perf_counter_ns
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as kept:
        kept.connect(str(path))
        for _ in range(WARMUP):
            kept.sendall(PING)
            while not kept.recv(65536).endswith(b"\n"):
                pass
        end = time.monotonic() + DURATION
        n = 0
        while time.monotonic() < end:
            before = clock()
            kept.sendall(PING)
            while not kept.recv(65536).endswith(b"\n"):
                pass
            out["ping"].append((clock() - before) / 1000)
            n += 1
            if n % 10 == 0:
                before = clock()
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                    sock.connect(str(path))
                    sock.sendall(PING)
                    while not sock.recv(65536).endswith(b"\n"):
                        pass
                out["connect+ping"].append((clock() - before) / 1000)
            time.sleep(PACE)
    return out


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def run() -> list[Result]:
    """ROUNDS rounds of idle then crowd on one daemon; each figure is the median over the
    rounds (of the p99s, and of each round's crowd/idle ratio), so a burst of the machine's
    load in one round does not decide it."""
    rounds: list[tuple[dict[str, list[float]], dict[str, list[float]]]] = []
    with (
        tempfile.TemporaryDirectory(prefix="alp-bench-") as scratch,
        running_daemon(Path(scratch)) as daemon,
    ):
        context = multiprocessing.get_context("spawn")
        for _ in range(ROUNDS):
            idle = measure(daemon.socket_path)
            ready, stop = context.Event(), context.Event()
            attacker = context.Process(
                target=crowd, args=(str(daemon.socket_path), CROWD, ready, stop)
            )
            attacker.start()
            try:
                assert ready.wait(60), "the crowd did not connect"
                time.sleep(2 * TRICKLE)  # every connection has trickled at least once
                attacked = measure(daemon.socket_path)
            finally:
                stop.set()
                attacker.join(30)
            rounds.append((idle, attacked))
    results = []
    for kind in ("ping", "connect+ping"):
        for label, fraction, goal in (("p50", 0.5, ""), ("p99", 0.99, "<= 2")):
            ours = [percentile(attacked[kind], fraction) for _, attacked in rounds]
            base = [percentile(idle[kind], fraction) for idle, _ in rounds]
            ratios = [o / b for o, b in zip(ours, base, strict=True)]
            results.append(
                Result(
                    f"{kind} {label}, {CROWD} slowloris vs idle (median of {ROUNDS} rounds)",
                    statistics.median(ours),
                    "µs",
                    statistics.median(base),
                    statistics.median(ratios),
                    goal,
                )
            )
            if label == "p99":
                print(
                    f"{kind} p99 by round, crowd/idle µs: "
                    + ", ".join(f"{o:.0f}/{b:.0f}" for o, b in zip(ours, base, strict=True)),
                    file=sys.stderr,
                )
    return results


if __name__ == "__main__":
    for result in run():
        print(
            f"{result.name}: {result.figure:.0f} {result.unit} vs idle {result.baseline:.0f}"
            f" -> {result.ratio:.2f}x (goal {result.goal or '-'})"
        )
