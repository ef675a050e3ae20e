"""History sync against its floor, and alpd's memory during an import.

(a) Sync throughput: `history/import` of generated Claude Code transcripts through a real
    alpd (read, parse, redact, insert, two FTS5 indexes, cursor — all of it), against the
    floor of this design measured in the same run: the same files parsed line by line with
    msgspec and their text inserted into a plain unicode61 FTS5 table with sqlite3, 1000 rows
    per transaction (WAL, synchronous=NORMAL). Goal: ≥ 0.5× the floor's MB/s.
(b) alpd's RSS sampled every 0.1 s during that import: the peak against the RSS once the
    first tenth of the bytes was in, to show it stays flat (streamed, bounded chunks).

Sizes (MB of transcripts) come from ALP_BENCH_SYNC_MB (default 40; the full run used 1000).
Generated data is kept under ALP_BENCH_DATA (default /tmp/alp-bench-history) and reused;
bench_search reads the same blocks.
"""

from __future__ import annotations

import os
import random
import re
import sqlite3
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec

from alpd.testing.daemon import DaemonProcess, running_daemon
from bench import Result

SYNC_MB = int(os.environ.get("ALP_BENCH_SYNC_MB", "40"))
DATA = Path(os.environ.get("ALP_BENCH_DATA", "/tmp/alp-bench-history"))
FILE_MB = 4
SEED = 20261130


def vocabulary() -> tuple[list[str], list[int]]:
    """Words of this Python's stdlib sources with their frequencies (a Zipf-like mix)."""
    counts: Counter[str] = Counter()
    stdlib = Path(os.__file__).parent
    for path in sorted(stdlib.glob("*.py"))[:120]:
        counts.update(re.findall(r"[a-z]{3,12}", path.read_text(errors="replace").lower()))
    ranked = counts.most_common()
    return [w for w, _ in ranked], [c for _, c in ranked]


class Generator:
    """Deterministic Claude-Code-style transcripts: prompts, replies, tool rounds with long
    outputs, and big harness lines (attachments) that are not conversation."""

    def __init__(self, seed: int = SEED, codename: str = "") -> None:
        self.rng = random.Random(seed)
        # A word only this file holds, in a few prompts: what a user looking for "that
        # session where I worked on X" searches for.
        self.codename = codename
        words, weights = vocabulary()
        self.words = words
        sample = self.rng.choices(words, weights, k=1_200_000)
        self.pool = " ".join(sample)

    def text(self, low: int, high: int) -> str:
        size = int(self.rng.lognormvariate(0, 1) * (low + high) / 4) % (high - low) + low
        start = self.rng.randrange(0, len(self.pool) - size - 1)
        return self.pool[start : start + size]

    def prompt(self, n: int) -> str:
        text = self.text(40, 600)
        return f"{text} ({self.codename})" if self.codename and n % 50 == 1 else text

    def session(self, path: Path, target_bytes: int) -> None:
        session = str(uuid.UUID(int=self.rng.getrandbits(128)))
        enc = msgspec.json.Encoder()
        written, turn = 0, 0
        with path.open("wb") as f:
            while written < target_bytes:
                turn += 1
                ts = f"2026-11-{1 + turn % 28:02d}T10:{turn % 60:02d}:00.000Z"
                lines = self.turn(session, ts, turn)
                for record in lines:
                    data = enc.encode(record) + b"\n"
                    f.write(data)
                    written += len(data)

    def _line(self, kind: str, session: str, ts: str, message: Any) -> dict[str, Any]:
        return {
            "type": kind,
            "uuid": str(uuid.UUID(int=self.rng.getrandbits(128))),
            "sessionId": session,
            "timestamp": ts,
            "message": message,
        }

    def turn(self, session: str, ts: str, n: int) -> list[dict[str, Any]]:
        call = f"toolu_{n:08d}"
        usage = {"input_tokens": 1200, "output_tokens": 80}
        model = "claude-sonnet-bench"
        return [
            {"type": "attachment", "sessionId": session, "content": self.text(2000, 12000)},
            self._line("user", session, ts, {"role": "user", "content": self.prompt(n)}),
            self._line(
                "assistant",
                session,
                ts,
                {
                    "model": model,
                    "content": [{"type": "text", "text": self.text(200, 2500)}],
                    "usage": usage,
                },
            ),
            self._line(
                "assistant",
                session,
                ts,
                {
                    "model": model,
                    "content": [
                        {
                            "type": "tool_use",
                            "id": call,
                            "name": "Bash",
                            "input": {"command": self.text(20, 300)},
                        }
                    ],
                },
            ),
            self._line(
                "user",
                session,
                ts,
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": call,
                            "content": self.text(300, 20000),
                        }
                    ],
                },
            ),
            self._line(
                "assistant",
                session,
                ts,
                {
                    "model": model,
                    "content": [{"type": "text", "text": self.text(100, 1500)}],
                    "usage": usage,
                },
            ),
        ]


BLOCK_FILES = 5


def codename(k: int) -> str:
    return f"codename{k:05d}"


def blocks(total_mb: int) -> list[Path]:
    """Directories of generated sessions adding up to ~`total_mb` MB (blocks of
    BLOCK_FILES × FILE_MB), cached; block i is the same in every set, so the 300 MB set is
    the 100 MB set plus more. File k holds the word `codename(k)`."""
    count = max(1, round(total_mb / (BLOCK_FILES * FILE_MB)))
    out = []
    for i in range(count):
        directory = DATA / "v2" / f"block-{i:04d}"
        marker = directory / ".complete"
        if not marker.exists():
            directory.mkdir(parents=True, exist_ok=True)
            for j in range(BLOCK_FILES):
                k = i * BLOCK_FILES + j
                path = directory / f"{uuid.UUID(int=SEED * 1_000_003 + k)}.jsonl"
                Generator(SEED + k, codename(k)).session(path, FILE_MB * 1_000_000)
            marker.touch()
        out.append(directory)
    return out


def files_of(directories: list[Path]) -> list[Path]:
    return sorted(path for directory in directories for path in directory.rglob("*.jsonl"))


def total_bytes(directories: list[Path]) -> int:
    return sum(p.stat().st_size for p in files_of(directories))


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
    return elapsed


# alpd


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class RssSampler:
    """alpd's RSS every 0.1 s, with the fraction of the import's bytes done at each sample."""

    def __init__(self, pid: int, home: Path, total: int) -> None:
        self.pid, self.home, self.total = pid, home, total
        self.samples: list[tuple[float, float]] = []
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


def run() -> list[Result]:
    directories = blocks(SYNC_MB)
    size_mb = total_bytes(directories) / 1e6
    with tempfile.TemporaryDirectory(prefix="alp-bench-history-") as tmp:
        work = Path(tmp)
        floor = floor_seconds(directories, work)
        (work / "alpd").mkdir()
        with running_daemon(work / "alpd") as d:
            with RssSampler(d.pid, d.home, total_bytes(directories)) as sampler:
                ours = import_seconds(d, directories)
            early, peak = sampler.early_and_peak()
    print(
        f"  history sync: {size_mb:.0f} MB in {ours:.1f} s (floor {floor:.1f} s); "
        f"alpd RSS {early:.0f} MB at 10 % → peak {peak:.0f} MB",
        file=sys.stderr,
    )
    return [
        Result(
            f"history sync throughput ({size_mb:.0f} MB)",
            size_mb / ours,
            "MB/s",
            size_mb / floor,
            floor / ours,
            ">= 0.5",
        ),
        Result(
            f"alpd peak RSS during a {size_mb:.0f} MB import (vs at 10 %)",
            peak,
            "MB",
            early,
            peak / early if early else None,
            "<= 1.5",
        ),
    ]
