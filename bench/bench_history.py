"""History sync against its floor, on both corpus shapes, and alpd's memory during an import.

(a) Import throughput: `history/import` of generated Claude Code transcripts through a real
    alpd installed from a wheel (read, parse, redact, insert, two FTS5 indexes, cursors — all
    of it), against the floor of this design: the same files parsed line by line with msgspec
    and their text inserted into a plain unicode61 FTS5 table with sqlite3, 1000 rows per
    transaction (WAL, synchronous=NORMAL). Both shapes of `bench.corpus`: many sessions
    (ALP_BENCH_SESSIONS_MB, default 60; the full run 300) and few large files
    (ALP_BENCH_SYNC_MB, default 40; the full run 100). Floor and alp alternate over
    ALP_BENCH_SYNC_ROUNDS rounds (default 1; the full run 3); the ratio is the median of the
    rounds' ratios. Goal: ≥ 0.5× the floor's MB/s.
(b) alpd's RSS sampled every 0.1 s during the many-sessions import: the peak against the RSS
    once the first tenth of the bytes was in, to show it stays flat.
"""

from __future__ import annotations

import os
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import msgspec

from alpd.testing.daemon import DaemonProcess, running_daemon
from bench import Result
from bench.corpus import files_of, large, sessions, total_bytes
from bench.install import installed

SESSIONS_MB = int(os.environ.get("ALP_BENCH_SESSIONS_MB", "60"))
SYNC_MB = int(os.environ.get("ALP_BENCH_SYNC_MB", "40"))
ROUNDS = int(os.environ.get("ALP_BENCH_SYNC_ROUNDS", "1"))


# the floor


def _tail(text: str) -> str:
    data = text.encode()
    return text if len(data) <= 2048 else data[-2048:].decode(errors="ignore")


def _texts(record: dict[str, Any]) -> list[str]:
    if record.get("type") not in ("user", "assistant"):
        return []
    content = (record.get("message") or {}).get("content")
    if isinstance(content, str):
        return [content]
    out = []
    for block in content or []:
        kind = block.get("type")
        if kind == "text":
            out.append(block.get("text") or "")
        elif kind == "tool_use":
            out.append(block.get("name", "") + "\n" + msgspec.json.encode(block["input"]).decode())
        elif kind == "tool_result":
            value = block.get("content")
            out.append(_tail(value if isinstance(value, str) else str(value)))
    return out


def floor_seconds(directories: list[Path], work: Path) -> float:
    """Parse with msgspec, insert the text into FTS5 with plain sqlite3, 1000 rows/txn."""
    db = work / "floor.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("CREATE VIRTUAL TABLE docs USING fts5(body)")
    decode = msgspec.json.decode
    started = time.perf_counter()
    batch: list[tuple[str]] = []
    for path in files_of(directories):
        with path.open("rb") as f:
            for raw in f:
                for text in _texts(decode(raw)):
                    batch.append((text,))
                    if len(batch) == 1000:
                        conn.execute("BEGIN")
                        conn.executemany("INSERT INTO docs (body) VALUES (?)", batch)
                        conn.execute("COMMIT")
                        batch.clear()
    if batch:
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO docs (body) VALUES (?)", batch)
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - started
    conn.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    return elapsed


# alpd


def rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except FileNotFoundError:
        pass  # exited
    return 0.0


def children_rss_mb(pid: int) -> float:
    """The RSS of `pid`'s child processes together (alpd's transcript reader)."""
    total = 0.0
    for children in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            total += sum(rss_mb(int(child)) for child in children.read_text().split())
        except (OSError, ValueError):
            continue  # a thread or child that ended meanwhile
    return total


class RssSampler:
    """alpd's RSS every 0.1 s, with the fraction of the import's bytes done at each sample,
    and the peak RSS of its children (the transcript reader process)."""

    def __init__(self, pid: int, home: Path, total: int) -> None:
        self.pid, self.home, self.total = pid, home, total
        self.samples: list[tuple[float, float]] = []
        self.children_peak = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _done_fraction(self) -> float:
        try:
            conn = sqlite3.connect(f"file:{self.home / 'alp.db'}?mode=ro", uri=True, timeout=1)
            try:
                row = conn.execute("SELECT coalesce(sum(consumed), 0) FROM history_cursors")
                return float(row.fetchone()[0]) / self.total
            finally:
                conn.close()
        except sqlite3.Error:
            return 0.0

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            self.samples.append((self._done_fraction(), rss_mb(self.pid)))
            self.children_peak = max(self.children_peak, children_rss_mb(self.pid))

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def early_and_peak(self) -> tuple[float, float]:
        early = [rss for done, rss in self.samples if done >= 0.1]
        peak = max((rss for _, rss in self.samples), default=0.0)
        return (early[0] if early else peak), peak


def import_seconds(d: DaemonProcess, directories: list[Path]) -> float:
    started = time.perf_counter()
    with d.client() as client:
        for directory in directories:
            client.call("history/import", {"runtime": "claude", "path": str(directory)})
    return time.perf_counter() - started


def measure(
    label: str, directories: list[Path], python: str, sample_rss: bool
) -> tuple[list[Result], tuple[float, float] | None]:
    """Rounds of floor then alp (fresh alpd each round); the throughput Result and, from the
    first round, (RSS at 10 %, peak RSS)."""
    size = total_bytes(directories)
    ratios, ours, floors = [], [], []
    memory = None
    with tempfile.TemporaryDirectory(prefix="alp-bench-history-") as tmp:
        for round_number in range(ROUNDS):
            work = Path(tmp) / f"round-{round_number}"
            (work / "alpd").mkdir(parents=True)
            floor = floor_seconds(directories, work)
            with running_daemon(work / "alpd", python=python) as d:
                if sample_rss and memory is None:
                    with RssSampler(d.pid, d.home, size) as sampler:
                        seconds = import_seconds(d, directories)
                    memory = sampler.early_and_peak()
                else:
                    seconds = import_seconds(d, directories)
            ratios.append(floor / seconds)
            ours.append(size / 1e6 / seconds)
            floors.append(size / 1e6 / floor)
            print(
                f"  {label}: alp {ours[-1]:.1f} MB/s, floor {floors[-1]:.1f} MB/s",
                file=sys.stderr,
            )
    result = Result(
        f"import {label} ({size / 1e6:.0f} MB, {len(files_of(directories))} files)",
        statistics.median(ours),
        "MB/s",
        statistics.median(floors),
        statistics.median(ratios),
        ">= 0.5",
    )
    return [result], memory


def run() -> list[Result]:
    python = installed().python
    many, memory = measure("many sessions", sessions(SESSIONS_MB), python, True)
    few, _ = measure("few large files", large(SYNC_MB), python, False)
    results = many + few
    if memory is not None:
        early, peak = memory
        results.append(
            Result(
                f"alpd peak RSS during the {SESSIONS_MB} MB many-sessions import (vs at 10 %)",
                peak,
                "MB",
                early,
                peak / early if early else None,
                "<= 1.5",
            )
        )
    return results
