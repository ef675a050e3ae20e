"""Memory across threads: what choosing memories costs a new root (alp installed from a wheel).

A real alpd holds ALP_BENCH_MEMORIES (default 10,000) active memories in one workspace, each
a sentence drawn from a 300-word vocabulary, so the thread's words match thousands of them
(the full-text leg ranks every one of them by bm25: their number is printed). Two agents run
the same `command` program: `recall` (memory on, `[memory] max_bytes` 2048) and `plain`
(`memory = false`). Each round continues one thread with each agent in turn — an interactive
continue, which reserves the root and writes its session context without spawning anything —
and settles the root again outside the timing; the order within a round alternates so
neither side is always warm. Figure: the p50 of the continue with memory minus the p50
without, both measured in this run on the same database. Goal: under 10 ms. Beside it, for
information, alpd's own CPU time per continue (from /proc, in clock ticks of 10 ms: a mean
over many rounds), which a loaded machine does not stretch as it stretches wall time.

The figure is only worth something if memories were chosen: after the rounds, every root of
`recall` must have been given at least one memory and a nonempty section, and no root of
`plain` any (read from `root_memories` in alpd's database); otherwise the bench fails. The
mean number of memories given, and the section's size, are printed beside the figures.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from alpd.domain.memory.selection import query_terms
from alpd.store.memory import match_expression
from alpd.testing.daemon import running_daemon
from bench import Result
from bench.install import installed

MEMORIES = int(os.environ.get("ALP_BENCH_MEMORIES", "10000"))
ROUNDS = int(os.environ.get("ALP_BENCH_MEMORY_ROUNDS", "60"))
CONFIG = """
[memory]
max_bytes = 2048

[agents.recall]
runtime = "command"

[agents.plain]
runtime = "command"
memory = false
"""
PROMPT = "add the invoice totals to the checkout page and keep prices in cents"


def vocabulary() -> list[str]:
    rng = random.Random(7)
    letters = "abcdefghijklmnoprstuvw"
    words = {"".join(rng.choice(letters) for _ in range(rng.randint(4, 9))) for _ in range(300)}
    return [*sorted(words), "invoice", "totals", "checkout", "prices", "cents", "page"]


def fill(d: object, workspace: Path, count: int) -> None:
    words = vocabulary()
    rng = random.Random(11)
    with d.client() as client:  # type: ignore[attr-defined]
        for n in range(count):
            text = " ".join(rng.choice(words) for _ in range(rng.randint(8, 16)))
            client.call("memory/add", {"text": f"{text} ({n})", "cwd": str(workspace)})


def cpu_ms(pid: int) -> float:
    """alpd's CPU time so far (user + system, every thread), in ms."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def continue_ms(d: object, thread_id: str, workspace: Path, agent: str) -> tuple[float, float, str]:
    """The wall time of one continue, alpd's CPU time during it, and the root's id."""
    pid = d.pid  # type: ignore[attr-defined]
    with d.client() as client:  # type: ignore[attr-defined]
        params = {"threadId": thread_id, "agent": agent, "args": ["true"], "cwd": str(workspace),
                  "prompt": PROMPT}  # fmt: skip
        cpu = cpu_ms(pid)
        started = time.perf_counter()
        result = client.call("thread/continue", params)
        elapsed = (time.perf_counter() - started) * 1000
        cpu = cpu_ms(pid) - cpu
        client.call(
            "execution/settle",
            {"executionId": result["execution"]["id"], "outcome": "completed", "exitCode": 0},
        )
    return elapsed, cpu, str(result["execution"]["id"])


def given(home: Path, roots: dict[str, list[str]]) -> tuple[float, float, int]:
    """The mean memories and section bytes given to `recall`'s roots, and how many memories
    hold any of the thread's words (all of them are ranked); fails unless each root of
    `recall` was given some and no root of `plain` any."""
    expression = match_expression(query_terms([PROMPT, "checkout"]), any_term=True)
    conn = sqlite3.connect(f"file:{home / 'alp.db'}?mode=ro", uri=True)
    try:
        rows = dict(
            (row[0], (len(json.loads(row[1])), int(row[2])))
            for row in conn.execute("SELECT execution_id, versions, bytes FROM root_memories")
        )
        (matches,) = conn.execute(
            "SELECT count(*) FROM memory_fts WHERE memory_fts MATCH ?", (expression,)
        ).fetchone()
    finally:
        conn.close()
    recall = [rows.get(root, (0, 0)) for root in roots["recall"]]
    if not recall or any(count == 0 or size == 0 for count, size in recall):
        raise RuntimeError(f"a root with memory was given none: {recall}")
    if any(rows.get(root, (0, 0))[0] for root in roots["plain"]):
        raise RuntimeError("a root without memory was given some")
    return (
        statistics.mean(count for count, _ in recall),
        statistics.mean(size for _, size in recall),
        int(matches),
    )


def run() -> list[Result]:
    alp = installed()
    with tempfile.TemporaryDirectory(prefix="alp-bench-memory-") as tmp:
        base = Path(tmp)
        workspace = base / "shop"
        (workspace / ".git").mkdir(parents=True)
        (base / "config.toml").write_text(CONFIG)
        with running_daemon(
            base, extra_args=["--config", str(base / "config.toml")], python=alp.python
        ) as d:
            fill(d, workspace, MEMORIES)
            thread_id = d.call("thread/create", {"title": "checkout", "cwd": str(workspace)})[
                "id"  # type: ignore[index]
            ]
            timings: dict[str, list[float]] = {"recall": [], "plain": []}
            cpu: dict[str, list[float]] = {"recall": [], "plain": []}
            roots: dict[str, list[str]] = {"recall": [], "plain": []}
            for agent in ("recall", "plain"):  # warm both paths
                continue_ms(d, thread_id, workspace, agent)
            for number in range(ROUNDS):
                order = ("recall", "plain") if number % 2 == 0 else ("plain", "recall")
                for agent in order:
                    wall, used, root = continue_ms(d, thread_id, workspace, agent)
                    timings[agent].append(wall)
                    cpu[agent].append(used)
                    roots[agent].append(root)
            count, size, matches = given(d.home, roots)
    with_memory = statistics.median(timings["recall"])
    without = statistics.median(timings["plain"])
    cpu_with, cpu_without = (statistics.mean(cpu[agent]) for agent in ("recall", "plain"))
    return [
        Result(
            f"memories given per root with memory (mean; {size:.0f} bytes; "
            f"{matches:,} matches ranked)",
            count,
            "memories",
            None,
            None,
            "",
        ),
        Result(
            "alpd CPU per continue with those memories vs without (mean; clock ticks)",
            cpu_with,
            "ms",
            cpu_without,
            cpu_with / cpu_without if cpu_without else None,
            "",
        ),
        Result(
            f"continue with {MEMORIES:,} memories in the workspace, p50 added vs without memory",
            with_memory - without,
            "ms",
            without,
            with_memory / without,
            "< 10 ms",
        ),
    ]


if __name__ == "__main__":
    for result in run():
        print(result)
