"""`thread/transcript` and `alp thread log` against their floors, with alp installed from a
wheel.

Each thread is made the way a person makes one from old work: a Claude session file of N
entries (turns shaped as the many-sessions corpus's: a prompt, tool calls with their
results, a reply; `session_file`) is imported (`history/import`) and adopted
(`thread/adopt`); a push root (the `command` runtime) is
added after it, so a page crosses roots and has events (a root marker, a delivery, a
report) as well as entries. Sizes: ALP_BENCH_TRANSCRIPT_SIZES (default "1000,100000").

(a) The first page (no cursor: the newest `LIMIT` items, what `alp thread log` asks)
    over the socket, p50 and p99 of QUERIES calls, against the floor: the same statements
    `alpd.store.history.transcript.read_page` runs for that page, with the same parameters,
    run straight on SQLite with sqlite3 in the bench's process (`first_page_sql`: the owner
    check, the thread's roots, the events page, each root's entries from the newest root
    back until `LIMIT + 1` are read, and the tool-halves statement(s) for the page's
    entries; `fetchall` each, rows as alpd reads them: `sqlite3.Row` for roots and events,
    tuples for entries and halves), alternating which goes first. What the floor leaves
    out is all alpd does besides those statements: the socket and the client's JSON, the
    dispatch, checking the entries shown against their digests, building the items,
    encoding them. A view read again is the case measured: alpd keeps the pages it made
    with the reads they were made from, and a read equal to a kept one gives its page
    (`alpd.services.history.transcript`; the statements still run every time).
    Goal: p50 within 2× at every size.
    Printed beside it, for the cause of a miss: `daemon/ping`'s p50 (what any call costs:
    the socket, the event loop, the client's JSON; the floor pays none of it), the store's
    `read_page` and `page_rows` in this process (statements, digest checks, rows) against
    its statements alone, and a page not kept: each call asks another `limit`
    (`COLD_LIMITS`, more pages than alpd keeps), against the same statements with that
    limit (no goal: what a page costs alpd the first time it is made; its entries were
    verified before, so their digests are compared, not computed).
(b) Flat: the first page's p50 at the largest size over its p50 at the smallest.
    Goal: ≤ 1.5 (a page reads about `limit` entries, not the thread).
(c) `alp thread log THREAD --limit 200` (the whole command: start Python, connect, one call,
    render 200 items, print) against the raw stdlib client's same `thread/transcript` call
    printing its JSON (bench/bench_cli.py's RAW_CLIENT), interleaved, median of RUNS.
    Goal: ≤ 1.3×.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterable
from pathlib import Path

from alpd.domain.history.transcript import END
from alpd.store.history.transcript import (
    _ENTRIES,
    _EVENTS_PAGE,
    _OWNER,
    _ROOTS,
    PageQuery,
    halves_sql,
    page_rows,
    read_page,
    tuples,
)
from alpd.testing.daemon import DaemonProcess, running_daemon
from bench import Result
from bench.bench_cli import RAW_CLIENT, timed
from bench.corpus import text_drawer
from bench.install import installed

SIZES = [int(x) for x in os.environ.get("ALP_BENCH_TRANSCRIPT_SIZES", "1000,100000").split(",")]
QUERIES = int(os.environ.get("ALP_BENCH_TRANSCRIPT_QUERIES", "400"))
RUNS = int(os.environ.get("ALP_BENCH_TRANSCRIPT_RUNS", "15"))
LIMIT = 100
#: the limits asked in turn for pages not kept: more pages than alpd keeps
COLD_LIMITS = range(LIMIT - 59, LIMIT + 1)
LOG_ITEMS = 200

CONFIG = """
[agents.echo]
runtime = "command"
args = ["sh", "-c", "cat; echo done"]
"""


def session_file(directory: Path, entries: int) -> tuple[Path, str]:
    """A Claude session of `entries` entries shaped as the many-sessions corpus's turns
    (`bench/corpus.py`, the size of its median session's): a prompt of 30–800 characters,
    0–6 tool calls (a command of 20–200, its output 100–1,600), a reply of 80–1,250."""
    session = str(uuid.uuid4())
    path = directory / f"{session}.jsonl"
    rng = random.Random(entries)
    text = text_drawer(entries)
    with path.open("w") as out:
        written = 0
        turn = 0

        def line(record: dict[str, object]) -> None:
            nonlocal written
            out.write(json.dumps({**base, "uuid": str(uuid.uuid4()), **record}) + "\n")
            written += 1

        while written < entries:
            turn += 1
            ts = f"2026-11-{1 + turn % 28:02d}T10:{turn % 60:02d}:00.000Z"
            base = {"sessionId": session, "timestamp": ts}
            line({"type": "user", "message": {"role": "user",
                  "content": f"turn {turn}: {text(30, 800)}"}})  # fmt: skip
            for call in range(rng.choice((0, 1, 1, 2, 3, 4, 6))):
                if written + 3 > entries:
                    break
                call_id = f"toolu_{turn}_{call}"
                line({"type": "assistant", "message": {"model": "claude-bench", "content": [
                    {"type": "tool_use", "id": call_id, "name": "Bash",
                     "input": {"command": text(20, 200)}}]}})  # fmt: skip
                line({"type": "user", "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": call_id,
                     "content": text(100, 1600)}]}})  # fmt: skip
            if written < entries:
                line({"type": "assistant", "message": {"model": "claude-bench", "content": [
                    {"type": "text", "text": text(80, 1250)}]}})  # fmt: skip
    return path, session


def make_thread(d: DaemonProcess, base: Path, entries: int) -> str:
    directory = base / f"sessions-{entries}"
    directory.mkdir()
    _, session = session_file(directory, entries)
    started = time.perf_counter()
    with d.client() as client:
        client.call("history/import", {"runtime": "claude", "path": str(directory)})
        adopted = client.call("thread/adopt", {"sessionId": session})
        thread_id = str(adopted["threadId"])
        client.call("thread/push", {"threadId": thread_id, "text": "one more", "source": "bench",
                                    "agent": "echo"})  # fmt: skip
        while True:
            roots = client.call("thread/show", {"threadId": thread_id})["roots"]
            if len(roots) == 2 and all(r["status"] == "settled" for r in roots):
                break
            time.sleep(0.1)
        client.call("daemon/sweep", {})
    print(
        f"  thread of {adopted['entries']:,} entries in {time.perf_counter() - started:.1f} s",
        file=sys.stderr,
    )
    return thread_id


def first_page_sql(connection: sqlite3.Connection, thread_id: str, limit: int = LIMIT) -> None:
    """The statements `read_page` runs for the newest page, straight on SQLite (the entries
    and their halves as tuples, as `read_page` reads them)."""
    connection.execute(_OWNER, (thread_id,)).fetchone()
    roots = connection.execute(_ROOTS, (thread_id,)).fetchall()
    want = limit + 1
    connection.execute(_EVENTS_PAGE["before"], (thread_id, *END, None, None, want)).fetchall()
    rows: list[tuple[object, ...]] = []
    for root in reversed(roots):
        rows += tuples(
            connection, _ENTRIES["before"], (root["reads"], 2**62, None, want - len(rows))
        )
        if len(rows) >= want:
            break
    for statement in halves_sql(rows[:limit]):
        tuples(connection, *statement)


def in_process(d: DaemonProcess, thread_id: str) -> tuple[float, float]:
    """Median ms of the store's `read_page` and `page_rows` (the statements, the digest
    checks, the rows) and of its statements alone, on one connection in this process: where
    alpd's time goes before the socket."""
    connection = sqlite3.connect(f"file:{d.home / 'alp.db'}?mode=ro", uri=True)
    connection.row_factory = sqlite3.Row
    query = PageQuery(thread_id=thread_id, uid=os.getuid(), direction="before", bound=END,
                      limit=LIMIT)  # fmt: skip
    page: list[float] = []
    sql: list[float] = []
    for turn in range(QUERIES // 2):
        for name in ("page", "sql") if turn % 2 else ("sql", "page"):
            started = time.perf_counter()
            if name == "page":
                page_rows(read_page(connection, query))
            else:
                first_page_sql(connection, thread_id)
            (page if name == "page" else sql).append((time.perf_counter() - started) * 1000)
    connection.close()
    return statistics.median(page), statistics.median(sql)


def latency(
    d: DaemonProcess, thread_id: str, limits: Iterable[int]
) -> tuple[list[float], list[float], list[float]]:
    """Per-call ms of the first page through alpd, of its statements on SQLite, and of
    `daemon/ping` (what any call costs: the socket, the loop, the client's JSON); each turn
    asks the next of `limits`."""
    direct = sqlite3.connect(f"file:{d.home / 'alp.db'}?mode=ro", uri=True)
    direct.row_factory = sqlite3.Row
    rpc_ms: list[float] = []
    sql_ms: list[float] = []
    ping_ms: list[float] = []
    with d.client() as client:

        def through_alpd(limit: int) -> float:
            started = time.perf_counter()
            client.call("thread/transcript", {"threadId": thread_id, "limit": limit})
            return (time.perf_counter() - started) * 1000

        def straight(limit: int) -> float:
            started = time.perf_counter()
            first_page_sql(direct, thread_id, limit)
            return (time.perf_counter() - started) * 1000

        def ping() -> float:
            started = time.perf_counter()
            client.call("daemon/ping", {})
            return (time.perf_counter() - started) * 1000

        asked = iter(limits)
        for _ in range(20):
            limit = next(asked)
            through_alpd(limit)
            straight(limit)
        for turn in range(QUERIES):
            limit = next(asked)
            if turn % 2:
                sql_ms.append(straight(limit))
                rpc_ms.append(through_alpd(limit))
            else:
                rpc_ms.append(through_alpd(limit))
                sql_ms.append(straight(limit))
            if turn % 4 == 0:
                ping_ms.append(ping())
    direct.close()
    return rpc_ms, sql_ms, ping_ms


def log_against_raw(alp_bin: str, python: str, d: DaemonProcess, thread_id: str, cwd: Path) -> (
    tuple[float, float]
):  # fmt: skip
    env = {k: v for k, v in d.env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    ours = [alp_bin, "thread", "log", thread_id, "--limit", str(LOG_ITEMS)]
    params = json.dumps({"threadId": thread_id, "limit": LOG_ITEMS})
    raw = [python, "-I", "-c", RAW_CLIENT, "thread/transcript", params]
    for command in (ours, raw):
        timed(command, env, cwd)
    times: dict[str, list[float]] = {"alp": [], "raw": []}
    for run in range(RUNS):
        order = [("alp", ours), ("raw", raw)]
        for name, command in order if run % 2 == 0 else order[::-1]:
            times[name].append(timed(command, env, cwd)[0])
    return statistics.median(times["alp"]), statistics.median(times["raw"])


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run() -> list[Result]:
    alp = installed()
    results: list[Result] = []
    p50s: dict[int, float] = {}
    with tempfile.TemporaryDirectory(prefix="alp-bench-transcript-") as scratch:
        base = Path(scratch)
        (base / "alpd").mkdir()
        (base / "alpd" / "config.toml").write_text(CONFIG)
        with running_daemon(
            base / "alpd",
            python=alp.python,
            extra_args=["--config", str(base / "alpd" / "config.toml")],
        ) as d:
            threads = {size: make_thread(d, base, size) for size in sorted(SIZES)}
            for size, thread_id in threads.items():
                rpc_ms, sql_ms, ping_ms = latency(d, thread_id, itertools.repeat(LIMIT))
                for name, q in (("p50", 0.5), ("p99", 0.99)):
                    mine, floor = percentile(rpc_ms, q), percentile(sql_ms, q)
                    if name == "p50":
                        p50s[size] = mine
                    results.append(
                        Result(
                            f"thread/transcript first page {name} vs its statements on "
                            f"SQLite, {size:,} entries",
                            mine,
                            "ms",
                            floor,
                            mine / floor,
                            "<= 2" if name == "p50" else "",
                        )
                    )
                results.append(
                    Result(
                        f"daemon/ping p50 beside it, {size:,} entries (any call's own cost)",
                        percentile(ping_ms, 0.5),
                        "ms",
                        None,
                        None,
                        "",
                    )
                )
                rpc_ms, sql_ms, _ = latency(d, thread_id, itertools.cycle(COLD_LIMITS))
                results.append(
                    Result(
                        f"thread/transcript page not kept (another limit each call), p50 vs "
                        f"its statements, {size:,} entries",
                        percentile(rpc_ms, 0.5),
                        "ms",
                        percentile(sql_ms, 0.5),
                        percentile(rpc_ms, 0.5) / percentile(sql_ms, 0.5),
                        "",
                    )
                )
                page, sql = in_process(d, thread_id)
                results.append(
                    Result(
                        f"read_page in-process vs its SQL, {size:,} entries (where time goes)",
                        page,
                        "ms",
                        sql,
                        page / sql,
                        "",
                    )
                )
            smallest, largest = min(SIZES), max(SIZES)
            results.append(
                Result(
                    f"thread/transcript first page p50, {largest:,} vs {smallest:,} entries",
                    p50s[largest],
                    "ms",
                    p50s[smallest],
                    p50s[largest] / p50s[smallest],
                    "<= 1.5",
                )
            )
            ours, raw = log_against_raw(
                alp.script("alp"), alp.python, d, threads[largest], base / "alpd"
            )
            results.append(
                Result(
                    f"alp thread log ({LOG_ITEMS} items) vs raw client, {largest:,} entries",
                    ours,
                    "ms",
                    raw,
                    ours / raw,
                    "<= 1.3",
                )
            )
    return results
