"""The meaning index: building throughput and alpd's memory while it builds, and the cost of
a hybrid search against a keyword one on the same history (docs/search.md), with alp
installed from a wheel with its `semantic` extra (`bench/install.py`).

(a) Indexing: a generated history of ALP_BENCH_MEANING_UNITS person's turns and assistant
    replies (default 4,000 units; texts of 10-60 words from a 30,000-word vocabulary) is
    imported, then alpd builds its meaning index with (1) the tiny test model (32 dimensions,
    the test vocabulary) and (2) a generated model of realistic size (256 dimensions, 30,000
    words, like potion-base-8M). Figure: units (chunks) per second from the first chunk
    embedded to ready; alpd's RSS sampled every 0.5 s while it builds (first, peak, last).
    Baseline: the same texts embedded by the same model in one call in this process (the
    embedder's own speed: how much the store, the thread hops and the politeness pauses cost).
(b) On the many-sessions corpus of `bench/corpus.py` at growing sizes (ALP_BENCH_MEANING_MB,
    default "30"; the issue's sizes "300,1000"), imported into one alpd with the realistic
    model: the build's rate and RSS for what each size added, then `history/search` p50 over
    one socket connection, hybrid against keyword on the same queries (2 words of the corpus's
    vocabulary, limit 20, ALP_BENCH_MEANING_QUERIES of them), each query first run untimed in
    both modes, then timed in both, alternating which goes first. Goal at the largest size:
    hybrid within 2× of keyword.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from alpd.testing.daemon import DaemonProcess, running_daemon
from bench import Result
from bench.bench_history import import_seconds, rss_mb
from bench.corpus import sessions, total_bytes, vocabulary
from bench.install import installed

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "integration")]

from meaning_models import random_vocabulary_model  # noqa: E402
from transcripts import Claude  # noqa: E402

UNITS = int(os.environ.get("ALP_BENCH_MEANING_UNITS", "4000"))
SIZES = [int(x) for x in os.environ.get("ALP_BENCH_MEANING_MB", "30").split(",")]
QUERIES = int(os.environ.get("ALP_BENCH_MEANING_QUERIES", "300"))
VOCABULARY = [f"w{i:05d}" for i in range(30_000)]
#: how long one build may take before the bench gives up (1 GB on a loaded 2-core VM)
BUILD_TIMEOUT = float(os.environ.get("ALP_BENCH_MEANING_TIMEOUT", "7200"))


def corpus(directory: Path, rng: random.Random) -> list[str]:
    texts = []
    directory.mkdir()
    per_session = 200
    for first in range(0, UNITS, per_session):
        claude = Claude()
        lines = []
        for i in range(first, min(UNITS, first + per_session)):
            text = " ".join(rng.choices(VOCABULARY, k=rng.randint(10, 60)))
            texts.append(text)
            lines.append(claude.prompt(text) if i % 2 == 0 else claude.reply(text))
        (directory / f"{claude.session}.jsonl").write_bytes(b"".join(lines))
    return texts


def search_state(d: DaemonProcess) -> dict[str, object]:
    return d.call("daemon/status", {})["search"]  # type: ignore[index,no-any-return]


def build(d: DaemonProcess, since: int = 0) -> tuple[float, int, list[float]]:
    """Seconds from the first chunk embedded (after `since`) to ready and caught up, the
    chunks embedded meanwhile, and alpd's RSS samples (MB)."""
    rss: list[float] = []
    started = None
    deadline = time.monotonic() + BUILD_TIMEOUT
    while time.monotonic() < deadline:
        state = search_state(d)
        rss.append(rss_mb(d.pid))
        embedded = int(state.get("embedded", 0))  # type: ignore[call-overload]
        if started is None and embedded > since:
            started = time.monotonic()
        if (
            state["state"] == "ready"
            and state.get("pendingEntries", 0) == 0
            and embedded == state.get("total", -1)
            and embedded > since
        ):
            return time.monotonic() - (started or time.monotonic()), embedded - since, rss
        time.sleep(0.5)
    raise TimeoutError(f"the meaning index was not built in {BUILD_TIMEOUT:.0f} s")


def floor_seconds(model: Path, texts: list[str]) -> float:
    from model2vec import StaticModel

    loaded = StaticModel.from_pretrained(model)
    started = time.monotonic()
    loaded.encode(texts, show_progress_bar=False, use_multiprocessing=False)
    return time.monotonic() - started


def p50s(d: DaemonProcess, queries: list[str]) -> tuple[float, float]:
    """p50 ms of hybrid and of keyword `history/search` over one connection, each query run
    untimed in both modes first, then timed in both, alternating which goes first."""
    times: dict[str, list[float]] = {"hybrid": [], "keyword": []}
    with d.client() as client:
        for turn, query in enumerate(queries):
            for mode in ("hybrid", "keyword"):
                client.call("history/search", {"query": query, "mode": mode, "limit": 20})
            for mode in ("hybrid", "keyword") if turn % 2 else ("keyword", "hybrid"):
                started = time.perf_counter()
                client.call("history/search", {"query": query, "mode": mode, "limit": 20})
                times[mode].append(time.perf_counter() - started)
    return statistics.median(times["hybrid"]) * 1000, statistics.median(times["keyword"]) * 1000


def config(base: Path, model: Path) -> list[str]:
    path = base / "config.toml"
    path.write_text(f'[search]\nembedder = "model2vec"\nmodel = "{model}"\n')
    return ["--config", str(path)]


def indexing(base: Path, python: str, rng: random.Random) -> list[Result]:
    """(a): build throughput of both models on the generated units, against model2vec."""
    results: list[Result] = []
    texts = corpus(base / "units", rng)
    tiny = random_vocabulary_model(base / "tiny", VOCABULARY[:2000], 32)
    real = random_vocabulary_model(base / "real", VOCABULARY, 256)
    for name, model in (
        ("tiny (32 dims, 2k words)", tiny),
        ("realistic (256 dims, 30k words)", real),
    ):
        run_base = base / f"run-{name.split()[0]}"
        run_base.mkdir()
        with running_daemon(run_base, extra_args=config(run_base, model), python=python) as d:
            d.call("history/import", {"runtime": "claude", "path": str(base / "units")})
            seconds, chunks, rss = build(d)
            floor = floor_seconds(model, texts)
            rate, floor_rate = chunks / seconds, len(texts) / floor
            results.append(
                Result(f"meaning index build, {name}: units/s", round(rate), "units/s",
                       round(floor_rate), round(floor_rate / rate, 1), "")
            )  # fmt: skip
            results.append(
                Result(f"alpd RSS while building, {name}: first/peak/last "
                       f"{rss[0]:.0f}/{max(rss):.0f}/{rss[-1]:.0f} MB", max(rss), "MB",
                       rss[0], round(max(rss) / rss[0], 2), "")
            )  # fmt: skip
    return results


def at_sizes(base: Path, python: str, rng: random.Random) -> list[Result]:
    """(b): the sessions corpus at each size: build rate, RSS, hybrid vs keyword p50."""
    results: list[Result] = []
    words, _ = vocabulary()
    model = random_vocabulary_model(base / "corpus-model", words[:30_000], 256)
    run_base = base / "sizes"
    run_base.mkdir()
    largest = max(SIZES)
    with running_daemon(run_base, extra_args=config(run_base, model), python=python) as d:
        imported: list[Path] = []
        embedded = 0
        for size in sorted(SIZES):
            dirs = sessions(size)
            new = [x for x in dirs if x not in imported]
            seconds = import_seconds(d, new)
            imported = dirs
            mb = total_bytes(dirs) / 1e6
            print(f"  imported {total_bytes(new) / 1e6:.0f} MB in {seconds:.1f} s", file=sys.stderr)
            took, chunks, rss = build(d, embedded)
            embedded += chunks
            print(f"  {mb:.0f} MB: {chunks} chunks embedded in {took:.1f} s", file=sys.stderr)
            results.append(
                Result(f"meaning index build, {size} MB of sessions ({chunks} chunks added; "
                       f"RSS first/peak/last {rss[0]:.0f}/{max(rss):.0f}/{rss[-1]:.0f} MB)",
                       round(chunks / took), "chunks/s", None, None, "")
            )  # fmt: skip
            queries = [" ".join(rng.sample(words[100:3000], 2)) for _ in range(QUERIES)]
            hybrid, keyword = p50s(d, queries)
            print(f"  {mb:.0f} MB: p50 hybrid {hybrid:.1f} ms, keyword {keyword:.1f} ms",
                  file=sys.stderr)  # fmt: skip
            results.append(
                Result(f"history/search p50, hybrid vs keyword, {size} MB ({embedded} chunks)",
                       round(hybrid, 2), "ms", round(keyword, 2), round(hybrid / keyword, 2),
                       "<= 2" if size == largest else "")
            )  # fmt: skip
    return results


def run() -> list[Result]:
    alp = installed("semantic")
    rng = random.Random(26)
    with tempfile.TemporaryDirectory(prefix="alp-bench-meaning-") as tmp:
        base = Path(tmp)
        results = []
        if UNITS:
            results += indexing(base, alp.python, rng)
        return results + at_sizes(base, alp.python, rng)


if __name__ == "__main__":
    for result in run():
        print(result)
