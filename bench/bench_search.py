"""Search against what users do today and against the bare index.

(a) The whole `alp search WORD` command (start Python, connect, one `history/search`, print)
    against `rg -l WORD` over the raw transcript files, warm page cache, at growing sizes of
    generated Claude Code transcripts (ALP_BENCH_SEARCH_MB, default "20,60"; the full run used
    "100,300,1000"). Goals: ≥ 1.5× faster than rg at 300 MB, ≥ 4× at 1 GB (the largest size
    here stands for them), and `alp search` time growing < 1.3× from the smallest to the
    largest size while rg's grows with the data. Each size is imported into the same alpd, so
    the history holds every file rg reads. Runs interleave, medians of RUNS per word.
(b) `history/search` p50/p99 over a socket (2-word queries from the corpus, bm25, snippets)
    against the same SQL (`alpd.services.search.search_sql`) run directly with sqlite3 on the
    same database. Goal: within 1.5×.

ripgrep is installed with apt-get when missing (the bench is not part of `make test`).
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
from pathlib import Path

from alpd.services.context import Caller
from alpd.services.search import parse_query, search_sql
from alpd.testing.daemon import DaemonProcess, running_daemon
from bench import Result
from bench.bench_history import (
    BLOCK_FILES,
    blocks,
    codename,
    import_seconds,
    total_bytes,
    vocabulary,
)
from protocol import messages as m

SIZES = [int(x) for x in os.environ.get("ALP_BENCH_SEARCH_MB", "20,60").split(",")]
RUNS = int(os.environ.get("ALP_BENCH_SEARCH_RUNS", "5"))
WORDS = int(os.environ.get("ALP_BENCH_SEARCH_WORDS", "6"))
LATENCY_QUERIES = int(os.environ.get("ALP_BENCH_LATENCY_QUERIES", "200"))


def ripgrep() -> str:
    found = shutil.which("rg")
    if found is None:
        subprocess.run(
            ["apt-get", "install", "-y", "-q", "ripgrep"], check=True, stdout=subprocess.DEVNULL
        )
        found = shutil.which("rg")
    assert found is not None, "ripgrep is needed: apt-get install ripgrep"
    return found


def alp_command() -> list[str]:
    script = Path(sys.executable).parent / "alp"
    return [str(script)] if script.exists() else [sys.executable, "-m", "alpctl"]


def timed(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def query_words(rng: random.Random) -> list[str]:
    """Words that one file of the smallest set holds (each file's codename), so `rg -l`
    must read everything: a search for "that session where I worked on X"."""
    return [codename(k) for k in rng.sample(range(BLOCK_FILES), min(WORDS, BLOCK_FILES))]


def compare_at(
    d: DaemonProcess, dirs: list[Path], words: list[str], rg: str
) -> tuple[float, float]:
    """Median seconds of `alp search W` and of `rg -l W DIRS`, warm, interleaved."""
    env = {**d.env}
    alp_times: list[float] = []
    rg_times: list[float] = []
    for word in words:  # warm both: page cache for rg, index pages for alpd
        timed([*alp_command(), "search", word], env)
        timed([rg, "-l", word, *map(str, dirs)], env)
    for _ in range(RUNS):
        for word in words:
            alp_times.append(timed([*alp_command(), "search", word], env))
            rg_times.append(timed([rg, "-l", word, *map(str, dirs)], env))
    return statistics.median(alp_times), statistics.median(rg_times)


def latency(d: DaemonProcess, rng: random.Random) -> tuple[list[float], list[float]]:
    """Per-query ms of `history/search` over the socket and of the same SQL run directly."""
    words, _ = vocabulary()
    queries = [" ".join(rng.sample(words[100:3000], 2)) for _ in range(LATENCY_QUERIES)]
    direct = sqlite3.connect(f"file:{d.home / 'alp.db'}?mode=ro", uri=True)
    caller = Caller(uid=os.getuid(), gid=os.getgid(), pid=os.getpid())
    rpc_ms: list[float] = []
    direct_ms: list[float] = []
    with d.client() as client:
        for query in queries[:20]:
            client.call("history/search", {"query": query})
        for query in queries:
            started = time.perf_counter()
            client.call("history/search", {"query": query})
            rpc_ms.append((time.perf_counter() - started) * 1000)
            params = m.HistorySearchParams(query=query)
            sql, values = search_sql(caller, params, parse_query(query))
            started = time.perf_counter()
            direct.execute(sql, values).fetchall()
            direct_ms.append((time.perf_counter() - started) * 1000)
    direct.close()
    return rpc_ms, direct_ms


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run() -> list[Result]:
    rg = ripgrep()
    rng = random.Random(5)
    words = query_words(rng)
    results: list[Result] = []
    figures: list[tuple[int, float, float]] = []
    with tempfile.TemporaryDirectory(prefix="alp-bench-search-") as tmp:
        (Path(tmp) / "alpd").mkdir()
        with running_daemon(Path(tmp) / "alpd") as d:
            imported: list[Path] = []
            for size in sorted(SIZES):
                dirs = blocks(size)
                new = [x for x in dirs if x not in imported]
                seconds = import_seconds(d, new)
                imported = dirs
                mb = total_bytes(dirs) / 1e6
                print(
                    f"  imported {total_bytes(new) / 1e6:.0f} MB in {seconds:.1f} s",
                    file=sys.stderr,
                )
                alp_s, rg_s = compare_at(d, dirs, words, rg)
                figures.append((size, alp_s, rg_s))
                print(
                    f"  {mb:.0f} MB: alp search {alp_s * 1000:.0f} ms, rg -l {rg_s * 1000:.0f} ms",
                    file=sys.stderr,
                )
            rpc_ms, direct_ms = latency(d, rng)
    for size, alp_s, rg_s in figures:
        goal = ""
        if size == max(SIZES) and len(SIZES) > 1:
            goal = ">= 4" if size >= 1000 else ">= 1.5"
        elif size == 300:
            goal = ">= 1.5"
        results.append(
            Result(
                f"alp search vs rg -l, {size} MB",
                alp_s * 1000,
                "ms",
                rg_s * 1000,
                rg_s / alp_s,
                goal,
            )
        )
    if len(figures) > 1:
        (small, a0, r0), (large, a1, r1) = figures[0], figures[-1]
        results.append(
            Result(
                f"alp search growth {small}→{large} MB (rg grew {r1 / r0:.1f}×)",
                a1 / a0,
                "×",
                None,
                a1 / a0,
                "<= 1.3",
            )
        )
    for name, q in (("p50", 0.5), ("p99", 0.99)):
        ours, floor = percentile(rpc_ms, q), percentile(direct_ms, q)
        results.append(
            Result(
                f"history/search {name} vs the same SQL direct",
                ours,
                "ms",
                floor,
                ours / floor,
                "<= 1.5",
            )
        )
    return results
