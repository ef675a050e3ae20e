"""The PostgreSQL store against SQLite's, and its import against a plain COPY (issue 24,
docs/many-machines.md): alp installed from a wheel, a private cluster started here (as the
tests start theirs, `tests/postgres_cluster.py`, but with `fsync=on`: SQLite runs with
`synchronous=FULL`, so both make each commit durable before it answers).

Two alpd from the same wheel, one on SQLite in its home, one on a fresh PostgreSQL database,
each given the many-sessions corpus (ALP_BENCH_PG_MB, default 30; the issue's size 300):

(a) `history/import` of the corpus into each (SQLite first, then PostgreSQL), for information,
    and the PostgreSQL import against its floor: **a plain COPY of the same rows** — every
    row the import wrote, copied out with `COPY … TO` (binary) and copied into a fresh
    database of the same schema (its indexes and triggers) with `COPY … FROM`, one
    transaction. Goal: ≥ 0.3× the COPY's MB/s (of the corpus).
(b) `thread/continue` to the first byte of the run: a headless root of the `command` runtime
    writing one byte into a FIFO the bench is blocked reading; timed from the request sent to
    the byte read. ALP_BENCH_PG_CALLS (default 60) on each store, alternating which goes
    first; the root settles (untimed) before the next. Goal: p50 within 3× of SQLite's.
(c) `thread/show` of that thread (its roots and chain, a few hundred rows), interleaved.
    Goal: p50 within 3×.
(d) `history/search` (2-word queries of the corpus's vocabulary, bm25, snippets),
    ALP_BENCH_PG_QUERIES (default 300), interleaved, each query once untimed on both first.
    Goal: p50 within 3×.

`make postgres` installs the server; without it this bench fails, saying so.
"""

from __future__ import annotations

import importlib.util
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import psycopg

from alpctl.client import Client
from alpd.testing.daemon import DaemonProcess, running_daemon
from bench import Result
from bench.bench_history import import_seconds
from bench.corpus import sessions, total_bytes, vocabulary
from bench.install import SOURCE, installed

SIZE_MB = int(os.environ.get("ALP_BENCH_PG_MB", "30"))
CALLS = int(os.environ.get("ALP_BENCH_PG_CALLS", "60"))
QUERIES = int(os.environ.get("ALP_BENCH_PG_QUERIES", "300"))
GOAL = "<= 3"


def _cluster_module() -> ModuleType:
    """tests/postgres_cluster.py, the tests' private cluster (not a package of its own)."""
    spec = importlib.util.spec_from_file_location(
        "postgres_cluster", SOURCE / "tests" / "postgres_cluster.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _call(d: DaemonProcess, method: str, params: dict[str, Any]) -> dict[str, Any]:
    result = d.call(method, params)
    assert isinstance(result, dict), result
    return result


# (a) the import and its COPY floor


def _counts(url: str) -> dict[str, int]:
    with psycopg.connect(url) as conn:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY c.oid"
            )
        ]
        return {
            t: int(conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0])  # type: ignore[index]
            for t in tables
        }


def copy_seconds(source: str, fresh: str, tables: list[str], scratch: Path) -> float:
    """Seconds to COPY the rows of `tables` (in creation order) from `source` into `fresh`,
    one transaction; copied out first, untimed, into files under `scratch`."""
    files: list[tuple[str, Path]] = []
    with psycopg.connect(source) as conn:
        for table in tables:
            path = scratch / f"{table}.copy"
            with (
                path.open("wb") as out,
                conn.cursor().copy(f'COPY "{table}" TO STDOUT (FORMAT binary)') as copy,
            ):
                for chunk in copy:
                    out.write(chunk)
            files.append((table, path))
    with psycopg.connect(fresh) as conn:
        started = time.perf_counter()
        for table, path in files:
            with (
                path.open("rb") as data,
                conn.cursor().copy(f'COPY "{table}" FROM STDIN (FORMAT binary)') as copy,
            ):
                while chunk := data.read(1 << 20):
                    copy.write(chunk)
        conn.commit()
        return time.perf_counter() - started


# (b) continue to the first byte


@contextmanager
def first_byte(fifo: Path) -> Iterator[Callable[[], float]]:
    """While inside, a thread waits for one byte on `fifo`; the function returns when it
    came (perf_counter)."""
    arrived: list[float] = []

    def read() -> None:
        fd = os.open(fifo, os.O_RDONLY)  # blocks until the run opens it to write
        try:
            os.read(fd, 1)
            arrived.append(time.perf_counter())
        finally:
            os.close(fd)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()

    def when() -> float:
        reader.join(60)
        if not arrived:
            raise RuntimeError(f"the run never wrote to {fifo}")
        return arrived[0]

    yield when


def continue_ms(client: Client, thread_id: str, work: Path) -> float:
    with first_byte(work / "fifo") as when:
        started = time.perf_counter()
        made = client.call(
            "thread/continue",
            {"threadId": thread_id, "runtime": "command", "headless": True, "cwd": str(work),
             "args": ["sh", "-c", "printf x > fifo"]},
        )  # fmt: skip
        arrived = when()
    client.call("execution/wait", {"executionId": made["execution"]["id"], "timeout": 60})
    return (arrived - started) * 1000


def timed_ms(client: Client, method: str, params: dict[str, Any]) -> float:
    started = time.perf_counter()
    client.call(method, params)
    return (time.perf_counter() - started) * 1000


def interleaved(
    turns: int, sqlite: Callable[[int], float], postgres: Callable[[int], float]
) -> tuple[list[float], list[float]]:
    """`turns` of each, alternating which goes first."""
    ours_sqlite: list[float] = []
    ours_pg: list[float] = []
    for turn in range(turns):
        if turn % 2:
            ours_pg.append(postgres(turn))
            ours_sqlite.append(sqlite(turn))
        else:
            ours_sqlite.append(sqlite(turn))
            ours_pg.append(postgres(turn))
    return ours_sqlite, ours_pg


def _p50_result(name: str, sqlite_ms: list[float], pg_ms: list[float]) -> Result:
    mine, floor = statistics.median(pg_ms), statistics.median(sqlite_ms)
    print(f"  {name}: PostgreSQL {mine:.1f} ms, SQLite {floor:.1f} ms (p50)", file=sys.stderr)
    return Result(f"{name} p50, PostgreSQL vs SQLite", mine, "ms", floor, mine / floor, GOAL)


def run() -> list[Result]:
    cluster_module = _cluster_module()
    bin_dir = cluster_module.find_bin()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL's server is not installed: make postgres")
    alp = installed()
    dirs = sessions(SIZE_MB)
    size = total_bytes(dirs)
    results: list[Result] = []
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="alp-bench-pg-")))
        cluster = stack.enter_context(cluster_module.running_cluster(bin_dir, fsync=True))
        url = cluster.new_database()
        daemons: dict[str, DaemonProcess] = {}
        for name, env in (("sqlite", {}), ("postgres", {"ALP_STORE_URL": url})):
            (tmp / name / "work").mkdir(parents=True)
            os.mkfifo(tmp / name / "work" / "fifo")
            daemons[name] = stack.enter_context(
                running_daemon(tmp / name, extra_env=env, python=alp.python)
            )
        sqlite, pg = daemons["sqlite"], daemons["postgres"]

        # (a)
        sqlite_s = import_seconds(sqlite, dirs)
        before = _counts(url)
        pg_s = import_seconds(pg, dirs)
        after = _counts(url)
        wrote = [t for t in after if after[t] > before.get(t, 0) and t != "hosts"]
        copied = {t: after[t] - before.get(t, 0) for t in wrote}
        print(f"  the import wrote {copied}", file=sys.stderr)
        scratch = tmp / "copy"
        scratch.mkdir()
        fresh = cluster.new_database()
        # both ends as the admin: COPY FROM is refused under row-level security, and a COPY TO
        # under it is a SELECT * that writes generated columns, which no COPY FROM takes
        copy_s = copy_seconds(
            cluster_module.admin_url(url), cluster_module.admin_url(fresh), wrote, scratch
        )
        mb = size / 1e6
        print(
            f"  import {mb:.0f} MB: SQLite {sqlite_s:.1f} s, PostgreSQL {pg_s:.1f} s, "
            f"COPY of its rows {copy_s:.1f} s",
            file=sys.stderr,
        )
        results.append(
            Result(
                f"import {mb:.0f} MB into PostgreSQL vs a plain COPY of its rows",
                mb / pg_s,
                "MB/s",
                mb / copy_s,
                copy_s / pg_s,
                ">= 0.3",
            )
        )
        results.append(
            Result(
                f"import {mb:.0f} MB into PostgreSQL vs into SQLite (information)",
                mb / pg_s,
                "MB/s",
                mb / sqlite_s,
                sqlite_s / pg_s,
                "",
            )
        )

        # (b) and (c); the connections opened only now: alpd closes one idle for 2 minutes,
        # which the SQLite one was while PostgreSQL imported, on a loaded machine
        clients = {name: stack.enter_context(d.client()) for name, d in daemons.items()}
        threads = {
            name: _call(d, "thread/create", {"title": "bench", "cwd": str(tmp / name / "work")})[
                "id"
            ]
            for name, d in daemons.items()
        }

        def continuing(name: str) -> Callable[[int], float]:
            return lambda _: continue_ms(clients[name], threads[name], tmp / name / "work")

        continue_sqlite, continue_pg = interleaved(
            CALLS, continuing("sqlite"), continuing("postgres")
        )
        results.append(
            _p50_result("thread/continue to the run's first byte", continue_sqlite, continue_pg)
        )

        def showing(name: str) -> Callable[[int], float]:
            return lambda _: timed_ms(clients[name], "thread/show", {"threadId": threads[name]})

        show_sqlite, show_pg = interleaved(max(CALLS, 100), showing("sqlite"), showing("postgres"))
        results.append(_p50_result(f"thread/show ({CALLS} roots)", show_sqlite, show_pg))

        # (d)
        rng = random.Random(24)
        words, _ = vocabulary()
        queries = [" ".join(rng.sample(words[100:3000], 2)) for _ in range(QUERIES)]
        for query in queries:  # untimed: each store's pages in the OS's cache and its own
            for client in clients.values():
                timed_ms(client, "history/search", {"query": query})

        def searching(name: str) -> Callable[[int], float]:
            return lambda turn: timed_ms(clients[name], "history/search", {"query": queries[turn]})

        search_sqlite, search_pg = interleaved(QUERIES, searching("sqlite"), searching("postgres"))
        results.append(_p50_result(f"history/search at {mb:.0f} MB", search_sqlite, search_pg))
    return results
