"""alpd's memory with a large state, and over long runs of calls (alp installed from a wheel).

An alpd is given ALP_BENCH_THREADS threads (default 1,000; the full run 10,000) and
ALP_BENCH_ENTRIES history entries (default 100,000; the full run 1,000,000), imported from
short generated sessions (`dense`: prompt/reply pairs of a line or two, 500 entries a
file — what it takes to reach a million entries without gigabytes of tool output). Figures:

* RSS with that state, after a `thread/list` and a search, against the RSS of the same alpd
  when it had just started on an empty home. Goal: < 120 MB.
* RSS across the import: peak against the RSS once a tenth of the bytes was in. Goal ≤ 1.5×.
  Beside it, the peak RSS of alpd's transcript reader process (a child of alpd) during the
  import, reported against alpd's peak.
* RSS across ALP_BENCH_SHOWS (default 10,000) `thread/show` calls over all threads: after
  against before. Goal ≤ 1.1×.
"""

from __future__ import annotations

import os
import random
import tempfile
import uuid
from pathlib import Path

import msgspec

from alpd.testing.daemon import running_daemon
from bench import Result
from bench.bench_history import RssSampler, import_seconds, rss_mb
from bench.corpus import DATA, files_of, total_bytes
from bench.install import installed

THREADS = int(os.environ.get("ALP_BENCH_THREADS", "1000"))
ENTRIES = int(os.environ.get("ALP_BENCH_ENTRIES", "100000"))
SHOWS = int(os.environ.get("ALP_BENCH_SHOWS", "10000"))
PER_FILE = 500
FILES_PER_DIR = 200


def dense(entries: int) -> list[Path]:
    """Directories of sessions of PER_FILE short entries each, `entries` in all (cached)."""
    words = "alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega".split()  # noqa: SIM905
    enc = msgspec.json.Encoder()
    out = []
    files = -(-entries // PER_FILE)
    for i in range(-(-files // FILES_PER_DIR)):
        directory = DATA / "dense-v1" / f"dir-{i:04d}"
        if not (directory / ".complete").exists():
            directory.mkdir(parents=True, exist_ok=True)
            rng = random.Random(i)
            for _ in range(FILES_PER_DIR):
                session = str(uuid.UUID(int=rng.getrandbits(128)))
                lines = []
                for n in range(PER_FILE):
                    text = " ".join(rng.choices(words, k=rng.randint(4, 30)))
                    role = "user" if n % 2 == 0 else "assistant"
                    lines.append(
                        enc.encode(
                            {
                                "type": role,
                                "uuid": str(uuid.UUID(int=rng.getrandbits(128))),
                                "sessionId": session,
                                "timestamp": f"2026-11-01T10:{n // 60 % 60:02d}:{n % 60:02d}Z",
                                "message": {"role": role, "content": f"{n} {text}"},
                            }
                        )
                    )
                (directory / f"{session}.jsonl").write_bytes(b"\n".join(lines) + b"\n")
            (directory / ".complete").touch()
        out.append(directory)
        if (i + 1) * FILES_PER_DIR >= files:
            break
    return out


def run() -> list[Result]:
    alp = installed()
    directories = dense(ENTRIES)
    with tempfile.TemporaryDirectory(prefix="alp-bench-memory-") as tmp:
        base = Path(tmp)
        workspace = base / "workspace"
        workspace.mkdir()
        with running_daemon(base, python=alp.python) as d:
            fresh = rss_mb(d.pid)
            thread_ids = []
            with d.client() as client:
                for n in range(THREADS):
                    created = client.call(
                        "thread/create", {"title": f"bench {n}", "cwd": str(workspace)}
                    )
                    assert isinstance(created, dict)
                    thread_ids.append(created["id"])
            with RssSampler(d.pid, d.home, total_bytes(directories)) as sampler:
                import_seconds(d, directories)
            early, peak = sampler.early_and_peak()
            reader = sampler.children_peak
            with d.client() as client:
                client.call("thread/list", {"all": True})
                client.call("history/search", {"query": "alpha omega"})
                loaded = rss_mb(d.pid)
                for n in range(SHOWS):
                    client.call("thread/show", {"threadId": thread_ids[n % len(thread_ids)]})
            after_shows = rss_mb(d.pid)
            entries = sum(1 for _ in files_of(directories)) * PER_FILE
    return [
        Result(
            f"alpd RSS, {THREADS:,} threads + {entries:,} entries (vs fresh alpd)",
            loaded,
            "MB",
            fresh,
            loaded / fresh,
            "< 120 MB",
        ),
        Result(
            f"alpd peak RSS during the {entries:,}-entry import (vs at 10 %)",
            peak,
            "MB",
            early,
            peak / early if early else None,
            "<= 1.5",
        ),
        Result(
            "transcript reader process peak RSS during that import (vs alpd's peak)",
            reader,
            "MB",
            peak,
            reader / peak if peak else None,
            "",
        ),
        Result(
            f"alpd RSS after {SHOWS:,} thread/show (vs before)",
            after_shows,
            "MB",
            loaded,
            after_shows / loaded,
            "<= 1.1",
        ),
    ]
