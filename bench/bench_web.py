"""The web page against the socket, measured in the same run.

1. The threads page with `ALP_BENCH_WEB_THREADS` (1,000) threads: GET / on one keep-alive
   connection. The server's time is its `Server-Timing` (until the headers: the page is
   rendered whole by then); goal p50 under 30 ms. Beside it the round trip, against the
   `thread/list` socket call that reads the same threads (also a round trip, JSON decoded).
2. `daemon/ping` latency with 50 event streams open (`/events`, each a browser's
   EventSource) against none, rounds alternating. Goal: p50 within 1.5× of none.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from alpctl.client import Client
from alpd.testing.daemon import DaemonProcess, running_daemon
from bench import Result
from bench.bench_rpc import percentile, ping_round

THREADS = int(os.environ.get("ALP_BENCH_WEB_THREADS", "1000"))
PAGE_CALLS = int(os.environ.get("ALP_BENCH_WEB_CALLS", "60"))
STREAMS = 50
ROUNDS = int(os.environ.get("ALP_BENCH_ROUNDS", "6"))
PING_CALLS = int(os.environ.get("ALP_BENCH_CALLS", "3000"))


def open_web(daemon: DaemonProcess) -> tuple[int, str]:
    """(port, cookie) of the daemon's page, logged in."""
    done = daemon.cli("web", "--json")
    assert done.returncode == 0, done.stderr
    opened = json.loads(done.stdout)
    port = opened["port"]
    path = opened["loginUrl"].split(f":{port}", 1)[1]
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.request("GET", path)
    response = connection.getresponse()
    response.read()
    connection.close()
    return port, (response.getheader("set-cookie") or "").split(";")[0]


def make_threads(daemon: DaemonProcess, count: int) -> None:
    with Client.connect(daemon.socket_path) as client:
        for index in range(count):
            client.call("thread/create", {"title": f"bench thread {index}", "cwd": "/tmp"})


def page_times(port: int, cookie: str, calls: int) -> tuple[list[float], list[float]]:
    """Milliseconds per GET / on one keep-alive connection: the server's, the round trip's."""
    headers = {"Host": f"127.0.0.1:{port}", "Cookie": cookie}
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    server, trips = [], []
    try:
        for _ in range(calls):
            started = time.perf_counter()
            connection.request("GET", "/", headers=headers)
            response = connection.getresponse()
            body = response.read()
            trips.append((time.perf_counter() - started) * 1000)
            assert response.status == 200 and body.count(b'class="thread') >= THREADS
            timing = response.getheader("server-timing") or ""
            server.append(float(timing.partition("dur=")[2]))
    finally:
        connection.close()
    return server, trips


def list_times(daemon: DaemonProcess, calls: int) -> list[float]:
    """Milliseconds per thread/list call reading the same threads over the socket."""
    params = {"all": True, "statuses": ["open", "closed"], "limit": THREADS}
    times = []
    with Client.connect(daemon.socket_path) as client:
        for _ in range(calls):
            started = time.perf_counter()
            listed = client.call("thread/list", params)
            times.append((time.perf_counter() - started) * 1000)
            assert isinstance(listed, dict) and len(listed["threads"]) == THREADS
    return times


@contextmanager
def event_streams(port: int, cookie: str, count: int) -> Iterator[None]:
    """`count` open /events streams, their headers read, nothing else read meanwhile."""
    with ExitStack() as stack:
        for _ in range(count):
            sock = stack.enter_context(socket.create_connection(("127.0.0.1", port)))
            sock.sendall(
                f"GET /events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nCookie: {cookie}\r\n"
                "Accept: text/event-stream\r\n\r\n".encode()
            )
            head = b""
            while b"\r\n\r\n" not in head:
                head += sock.recv(4096)
            assert head.startswith(b"HTTP/1.1 200"), head[:80]
        yield


def bench_page(daemon: DaemonProcess, port: int, cookie: str) -> list[Result]:
    server: list[float] = []
    page: list[float] = []
    listing: list[float] = []
    calls = PAGE_CALLS // ROUNDS + 1
    for round_number in range(ROUNDS):
        if round_number % 2:
            listing += list_times(daemon, calls)
        served, trips = page_times(port, cookie, calls)
        server += served
        page += trips
        if round_number % 2 == 0:
            listing += list_times(daemon, calls)
    ours, floor = statistics.median(page), statistics.median(listing)
    return [
        Result(f"web threads page, {THREADS:,} threads, server p50", statistics.median(server),
               "ms", floor, statistics.median(server) / floor, "<= 30 ms"),
        Result("web threads page, round trip p50", ours, "ms", floor, ours / floor, ""),
        Result("web threads page, round trip p99", percentile(page, 0.99), "ms",
               percentile(listing, 0.99), None, ""),
    ]  # fmt: skip


def bench_streams(daemon: DaemonProcess, port: int, cookie: str) -> list[Result]:
    latencies: dict[str, list[float]] = {"streams": [], "none": []}
    for round_number in range(ROUNDS):
        order = ["streams", "none"] if round_number % 2 == 0 else ["none", "streams"]
        for condition in order:
            if condition == "none":
                latencies["none"] += ping_round(daemon.socket_path, PING_CALLS)[0]
                continue
            with event_streams(port, cookie, STREAMS):
                latencies["streams"] += ping_round(daemon.socket_path, PING_CALLS)[0]
    ours = statistics.median(latencies["streams"])
    floor = statistics.median(latencies["none"])
    return [
        Result(f"daemon/ping p50, {STREAMS} event streams open", ours, "µs", floor,
               ours / floor, "<= 1.5"),
    ]  # fmt: skip


def run() -> list[Result]:
    with (
        tempfile.TemporaryDirectory(prefix="alp-bench-") as scratch,
        running_daemon(Path(scratch)) as daemon,
    ):
        make_threads(daemon, THREADS)
        port, cookie = open_web(daemon)
        return bench_page(daemon, port, cookie) + bench_streams(daemon, port, cookie)
