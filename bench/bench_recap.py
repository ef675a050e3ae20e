"""The recap: what one refresh of a long thread sends, and alpd's memory over many refreshes.

A real alpd with the `api` summariser pointed at the scripted model server (127.0.0.1) gets
a thread whose first root's transcript holds ALP_BENCH_RECAP_ENTRIES history entries
(default 10,000 prompts and replies of a few dozen words). Figures:

* the input of the refresh that follows (the characters of the request's user message the
  model server received), against the thread's history text (every entry's text, summed
  from the database): bounded by `[recap] inputChars` (16,000) whatever the thread's length.
  Goal: the figure ≤ 16,000 characters;
* alpd's RSS after ALP_BENCH_RECAPS (default 100) more refreshes — each after one more root
  of two entries — against its RSS after the first ten of them (warm: every code path
  loaded). Goal ≤ 1.1×.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import tempfile
import time
import uuid
from pathlib import Path

from alpd.testing.daemon import DaemonProcess, running_daemon
from bench import Result
from bench.bench_history import rss_mb

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "e2e")]

from model_server import ModelServer, TextReply  # noqa: E402

ENTRIES = int(os.environ.get("ALP_BENCH_RECAP_ENTRIES", "10000"))
REFRESHES = int(os.environ.get("ALP_BENCH_RECAPS", "100"))
WARM = 10
INPUT_CHARS = 16_000
REPLY = json.dumps({"headline": "bench", "gist": "a long thread", "openTasks": ["more"]})
CONFIG = """
[recap]
summariser = "api"
apiUrl = "{url}"
minRoots = 1
minEntries = 1
minIntervalSeconds = 0
inputChars = {chars}
"""
WORDS = "alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega".split()  # noqa: SIM905


def transcript(path: Path, entries: int, salt: int) -> None:
    session = str(uuid.uuid4())
    lines = []
    for n in range(entries):
        role = "user" if n % 2 == 0 else "assistant"
        text = f"{salt}-{n} " + " ".join(WORDS[(n + k) % len(WORDS)] for k in range(30))
        message: dict[str, object] = {"role": role, "content": text}
        if role == "assistant":
            message = {"role": role, "model": "m", "content": [{"type": "text", "text": text}]}
        lines.append(
            json.dumps(
                {
                    "type": role,
                    "uuid": str(uuid.uuid4()),
                    "sessionId": session,
                    "timestamp": "2026-11-30T05:00:00.000Z",
                    "message": message,
                }
            )
        )
    path.write_text("\n".join(lines) + "\n")


def settled_root(d: DaemonProcess, thread_id: str, work: Path, entries: int, salt: int) -> None:
    started = d.call(
        "thread/continue",
        {"threadId": thread_id, "runtime": "command", "headless": True,
         "args": ["sleep", "60"], "cwd": str(work)},
    )  # fmt: skip
    assert isinstance(started, dict)
    execution_id = started["execution"]["id"]
    path = work / f"{execution_id}.jsonl"
    transcript(path, entries, salt)
    with sqlite3.connect(d.home / "alp.db", timeout=30, isolation_level=None) as conn:
        conn.execute(
            "UPDATE executions SET transcript_path = ? WHERE id = ?", (str(path), execution_id)
        )
    d.call("execution/cancel", {"executionId": execution_id})


def wait_requests(server: ModelServer, count: int, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while len(server.model_requests("anthropic")) < count:
        if time.monotonic() > deadline:
            raise RuntimeError(f"fewer than {count} refreshes after {timeout} s")
        time.sleep(0.05)


def history_chars(home: Path) -> int:
    with sqlite3.connect(f"file:{home / 'alp.db'}?mode=ro", uri=True) as conn:
        row = conn.execute("SELECT coalesce(sum(length(text)), 0) FROM history_entries").fetchone()
    return int(row[0])


def run() -> list[Result]:
    with tempfile.TemporaryDirectory(prefix="alp-bench-") as scratch, ModelServer() as server:
        base = Path(scratch)
        work = base / "work"
        work.mkdir()
        config = base / "config.toml"
        config.write_text(CONFIG.format(url=server.url, chars=INPUT_CHARS))
        server.script(*[TextReply(REPLY)] * (REFRESHES + 1))
        with running_daemon(
            base, extra_env={"ANTHROPIC_API_KEY": "bench"}, extra_args=["--config", str(config)]
        ) as d:
            thread = d.call("thread/create", {"title": "long", "cwd": str(work)})
            assert isinstance(thread, dict)
            settled_root(d, thread["id"], work, ENTRIES, 0)
            wait_requests(server, 1)
            sent = len(server.model_requests("anthropic")[0].body["messages"][0]["content"])
            whole = history_chars(d.home)
            rss: dict[int, float] = {}
            for n in range(1, REFRESHES + 1):
                settled_root(d, thread["id"], work, 2, n)
                wait_requests(server, n + 1)
                if n in (WARM, REFRESHES):
                    rss[n] = rss_mb(d.pid)
    return [
        Result(
            f"refresh input of a {ENTRIES:,}-entry thread vs its history text",
            sent,
            "chars",
            whole,
            sent / whole,
            f"<= {INPUT_CHARS} chars",
        ),
        Result(
            f"alpd RSS after {REFRESHES} refreshes vs after {WARM}",
            rss[REFRESHES],
            "MB",
            rss[WARM],
            rss[REFRESHES] / rss[WARM],
            "<= 1.1",
        ),
    ]
