"""The meaning index: building throughput and alpd's memory while it builds, and the cost of
a hybrid search against a keyword one on the same history (docs/search.md).

(a) Indexing: a generated history of ALP_BENCH_MEANING_UNITS person's turns and assistant
    replies (default 20,000 units; texts of 10-60 words from a 30,000-word vocabulary) is
    imported, then alpd builds its meaning index with (1) the tiny test model (32 dimensions,
    the test vocabulary) and (2) a generated model of realistic size (256 dimensions, 30,000
    words, like potion-base-8M). Figure: units (chunks) per second from the first chunk
    embedded to ready; alpd's RSS sampled every 0.5 s while it builds (first, peak, last).
    Baseline: the same texts embedded by the same model in one call in this process (the
    embedder's own speed: how much the store, the thread hops and the politeness pauses cost).
(b) `history/search` p50 over the socket, hybrid against keyword on the same daemon and
    queries (2 words of the vocabulary), alternating which goes first. Goal: within 2×.
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
from bench.bench_history import rss_mb

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "integration")]

from meaning_models import random_vocabulary_model  # noqa: E402
from transcripts import Claude  # noqa: E402

UNITS = int(os.environ.get("ALP_BENCH_MEANING_UNITS", "20000"))
QUERIES = int(os.environ.get("ALP_BENCH_MEANING_QUERIES", "200"))
VOCABULARY = [f"w{i:05d}" for i in range(30_000)]


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


def build(d: DaemonProcess) -> tuple[float, list[float]]:
    """Seconds from the first chunk embedded to ready, and alpd's RSS samples (MB)."""
    rss: list[float] = []
    started = None
    while True:
        state = d.call("daemon/status", {})["search"]  # type: ignore[index]
        rss.append(rss_mb(d.pid))
        if started is None and state.get("embedded", 0) > 0:
            started = time.monotonic()
        if state["state"] == "ready" and state.get("embedded", 0) == state.get("total", -1) > 0:
            return time.monotonic() - (started or time.monotonic()), rss
        time.sleep(0.5)


def floor_seconds(model: Path, texts: list[str]) -> float:
    from model2vec import StaticModel

    loaded = StaticModel.from_pretrained(model)
    started = time.monotonic()
    loaded.encode(texts, show_progress_bar=False, use_multiprocessing=False)
    return time.monotonic() - started


def p50(d: DaemonProcess, queries: list[str], mode: str) -> float:
    times = []
    for query in queries:
        started = time.perf_counter()
        d.call("history/search", {"query": query, "mode": mode, "limit": 20})
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def run() -> list[Result]:
    rng = random.Random(26)
    results: list[Result] = []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        texts = corpus(base / "sessions", rng)
        tiny = random_vocabulary_model(base / "tiny", VOCABULARY[:2000], 32)
        real = random_vocabulary_model(base / "real", VOCABULARY, 256)
        for name, model in (
            ("tiny (32 dims, 2k words)", tiny),
            ("realistic (256 dims, 30k words)", real),
        ):
            run_base = base / f"run-{name.split()[0]}"
            run_base.mkdir()
            config = run_base / "config.toml"
            config.write_text(f'[search]\nembedder = "model2vec"\nmodel = "{model}"\n')
            with running_daemon(run_base, extra_args=["--config", str(config)]) as d:
                d.call("history/import", {"runtime": "claude", "path": str(base / "sessions")})
                seconds, rss = build(d)
                chunks = d.call("daemon/status", {})["search"]["total"]  # type: ignore[index]
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
                if model is real:
                    queries = [
                        " ".join(rng.choices(texts[rng.randrange(len(texts))].split(), k=2))
                        for _ in range(QUERIES)
                    ]
                    p50(d, queries[:20], "hybrid")  # the matrix loads on the first one
                    keyword = hybrid = 0.0
                    for i in range(2):
                        order = ("keyword", "hybrid") if i % 2 == 0 else ("hybrid", "keyword")
                        for mode in order:
                            value = p50(d, queries, mode)
                            if mode == "keyword":
                                keyword += value / 2
                            else:
                                hybrid += value / 2
                    results.append(
                        Result(f"history/search p50, hybrid vs keyword ({chunks} chunks)",
                               round(hybrid, 2), "ms", round(keyword, 2),
                               round(hybrid / keyword, 2), "<= 2")
                    )  # fmt: skip
    return results


if __name__ == "__main__":
    for result in run():
        print(result)
