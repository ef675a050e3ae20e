"""Search against what users do today and against the bare index, on the many-sessions
shape, with alp installed from a wheel.

(a) The whole `alp search WORD` command (start Python, connect, one `history/search`, print)
    against `rg -l WORD` over the raw transcript files, at growing sizes (ALP_BENCH_SEARCH_MB,
    default "30,100"; the full run "300,1000"), **warm** (both just used) and **cold**: before
    each run the files it reads are evicted from the page cache with
    posix_fadvise(DONTNEED) — the transcripts before rg, alp's database before alp (alpd
    itself keeps running, as it does for a user). WORD is a word one session holds ("the
    session where I worked on X"), so rg reads everything. Goals at the largest size: faster
    than rg warm, ≥ 10× faster cold. Each size is imported into the same alpd, so the
    history holds every file rg reads. Runs interleave, medians of RUNS per word.
(b) The whole `alp search` against a raw stdlib client making the same call, at the largest
    size (its time must stay flat as history grows). Goal: ≤ 1.3×. Each word is searched once
    untimed first and the two alternate which goes first (until 2026-12-01 `alp search` always
    went first, and its first run of each word read the database the cold runs had evicted).
(c) `history/search` p50/p99 over a socket (2-word queries from the corpus's vocabulary, bm25,
    snippets) against the same SQL (`alpd.store.history.search.search_sql`) run directly with
    sqlite3 on the same database, at the largest size. Goal: within 1.5×. Each query is first
    run untimed on a third connection, then timed on both, alternating which goes first: the
    cold runs of (a) leave the database evicted, and whichever ran a query first paid the disk
    reads the other then found in the page cache (until 2026-12-01 alpd always went first,
    which inflated its p50 to 2-3.5× of the floor's on a quiet machine). The warm-up is not
    run on the floor's own connection: SQLite's page cache of the connection that just ran a
    query makes a re-run ~20 % faster, which alpd's reader never enjoys. 1,000 queries
    (ALP_BENCH_LATENCY_QUERIES; 200 until 2026-12-01), so that p99 is not two or three samples.

ripgrep comes from apt-get when missing (`apt-get install -y ripgrep`; the bench is not part
of `make test`), and the bench says so when it cannot install it.
"""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from alpd.services.context import Caller
from alpd.services.history.search import parse_query
from alpd.store.history.search import search_sql
from alpd.testing.daemon import DaemonProcess, running_daemon
from bench import Result
from bench.bench_cli import RAW_CLIENT
from bench.bench_history import import_seconds
from bench.corpus import SESSIONS_PER_BLOCK, codename, files_of, sessions, total_bytes, vocabulary
from bench.install import Installed, installed
from protocol import messages as m

SIZES = [int(x) for x in os.environ.get("ALP_BENCH_SEARCH_MB", "30,100").split(",")]
RUNS = int(os.environ.get("ALP_BENCH_SEARCH_RUNS", "5"))
WORDS = int(os.environ.get("ALP_BENCH_SEARCH_WORDS", "6"))
LATENCY_QUERIES = int(os.environ.get("ALP_BENCH_LATENCY_QUERIES", "1000"))


def ripgrep() -> str:
    found = shutil.which("rg")
    if found is None:
        print("  ripgrep missing: apt-get install -y ripgrep", file=sys.stderr)
        subprocess.run(["apt-get", "install", "-y", "-q", "ripgrep"], stdout=subprocess.DEVNULL)
        found = shutil.which("rg")
    if found is None:
        raise RuntimeError("ripgrep is needed and could not be installed: apt-get install ripgrep")
    return found


def evict(paths: Iterable[Path]) -> None:
    """Drop the files' pages from the page cache (no root needed)."""
    for path in paths:
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            continue
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def timed(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def query_words(rng: random.Random) -> list[str]:
    """Codenames of sessions of the smallest set (one session each holds it)."""
    return [codename(k) for k in rng.sample(range(SESSIONS_PER_BLOCK), WORDS)]


def database(d: DaemonProcess) -> list[Path]:
    return [d.home / name for name in ("alp.db", "alp.db-wal", "alp.db-shm")]


def compare_at(
    alp: Installed, d: DaemonProcess, dirs: list[Path], words: list[str], rg: str, cold: bool
) -> tuple[float, float]:
    """Median seconds of `alp search W` and of `rg -l W DIRS`, interleaved."""
    env = {k: v for k, v in d.env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    files = files_of(dirs)
    alp_times: list[float] = []
    rg_times: list[float] = []
    search = [alp.script("alp"), "search"]
    for word in words:  # warm both: page cache for rg, index pages for alpd
        timed([*search, word], env)
        timed([rg, "-l", word, *map(str, dirs)], env)
    for _ in range(RUNS):
        for word in words:
            if cold:
                evict(database(d))
            alp_times.append(timed([*search, word], env))
            if cold:
                evict(files)
            rg_times.append(timed([rg, "-l", word, *map(str, dirs)], env))
    return statistics.median(alp_times), statistics.median(rg_times)


def against_raw(alp: Installed, d: DaemonProcess, words: list[str]) -> tuple[float, float]:
    """Median seconds of `alp search W --json` and of the raw client's same call; each word
    is searched once untimed first (the cold runs before leave the database evicted), and
    the two alternate which goes first."""
    env = {k: v for k, v in d.env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    ours: list[float] = []
    raw: list[float] = []

    def commands(word: str) -> tuple[list[str], list[str]]:
        params = f'{{"query": "{word}", "limit": 20}}'
        return (
            [alp.script("alp"), "search", word, "--json"],
            [alp.python, "-I", "-c", RAW_CLIENT, "history/search", params],
        )

    for word in words:
        timed(commands(word)[1], env)
    for run in range(RUNS):
        for turn, word in enumerate(words):
            alp_search, raw_client = commands(word)
            if (run + turn) % 2:
                raw.append(timed(raw_client, env))
                ours.append(timed(alp_search, env))
            else:
                ours.append(timed(alp_search, env))
                raw.append(timed(raw_client, env))
    return statistics.median(ours), statistics.median(raw)


def latency(d: DaemonProcess, rng: random.Random) -> tuple[list[float], list[float]]:
    """Per-query ms of `history/search` over the socket and of the same SQL run directly."""
    words, _ = vocabulary()
    queries = [" ".join(rng.sample(words[100:3000], 2)) for _ in range(LATENCY_QUERIES)]
    direct, warm = (sqlite3.connect(f"file:{d.home / 'alp.db'}?mode=ro", uri=True) for _ in "dw")
    caller = Caller(uid=os.getuid(), gid=os.getgid(), pid=os.getpid())
    rpc_ms: list[float] = []
    direct_ms: list[float] = []
    with d.client() as client:

        def through_alpd(query: str) -> float:
            started = time.perf_counter()
            client.call("history/search", {"query": query})
            return (time.perf_counter() - started) * 1000

        def straight(query: str, connection: sqlite3.Connection) -> float:
            params = m.HistorySearchParams(query=query)
            sql, values = search_sql(caller.uid, params, parse_query(query))
            started = time.perf_counter()
            connection.execute(sql, values).fetchall()
            return (time.perf_counter() - started) * 1000

        for query in queries[:20]:
            through_alpd(query)
        for turn, query in enumerate(queries):
            straight(query, warm)  # untimed: its pages in the OS's cache for both timed runs
            if turn % 2:
                direct_ms.append(straight(query, direct))
                rpc_ms.append(through_alpd(query))
            else:
                rpc_ms.append(through_alpd(query))
                direct_ms.append(straight(query, direct))
    direct.close()
    warm.close()
    return rpc_ms, direct_ms


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run() -> list[Result]:
    rg = ripgrep()
    alp = installed()
    rng = random.Random(5)
    words = query_words(rng)
    results: list[Result] = []
    largest = max(SIZES)
    with tempfile.TemporaryDirectory(prefix="alp-bench-search-") as tmp:
        (Path(tmp) / "alpd").mkdir()
        with running_daemon(Path(tmp) / "alpd", python=alp.python) as d:
            imported: list[Path] = []
            for size in sorted(SIZES):
                dirs = sessions(size)
                new = [x for x in dirs if x not in imported]
                seconds = import_seconds(d, new)
                imported = dirs
                mb = total_bytes(dirs) / 1e6
                added = total_bytes(new) / 1e6
                print(f"  imported {added:.0f} MB in {seconds:.1f} s", file=sys.stderr)
                for cold in (False, True):
                    alp_s, rg_s = compare_at(alp, d, dirs, words, rg, cold)
                    state = "cold" if cold else "warm"
                    print(
                        f"  {mb:.0f} MB {state}: alp search {alp_s * 1000:.0f} ms, "
                        f"rg -l {rg_s * 1000:.0f} ms",
                        file=sys.stderr,
                    )
                    goal = ""
                    if size == largest:
                        goal = ">= 10" if cold else ">= 1"
                    results.append(
                        Result(
                            f"alp search vs rg -l, {size} MB, {state} (ratio: rg/alp)",
                            alp_s * 1000,
                            "ms",
                            rg_s * 1000,
                            rg_s / alp_s,
                            goal,
                        )
                    )
            ours, raw = against_raw(alp, d, words)
            results.append(
                Result(
                    f"alp search vs raw client, {largest} MB",
                    ours * 1000,
                    "ms",
                    raw * 1000,
                    ours / raw,
                    "<= 1.3",
                )
            )
            rpc_ms, direct_ms = latency(d, rng)
    for name, q in (("p50", 0.5), ("p99", 0.99)):
        mine, floor = percentile(rpc_ms, q), percentile(direct_ms, q)
        results.append(
            Result(
                f"history/search {name} vs the same SQL on FTS5, {largest} MB",
                mine,
                "ms",
                floor,
                mine / floor,
                "<= 1.5",
            )
        )
    return results
