"""kill -9 of alpd while it builds the meaning index, then a restart: the build resumes where
its last committed batch left it — every unit is embedded, and nothing embedded before the
kill is embedded again but the one batch in flight (`EMBED_BATCH`): vectors and the
generation's cursor are written in one transaction (docs/search.md). On both backends (SQLite's
file, or a PostgreSQL database)."""

from __future__ import annotations

import collections
import sys
import time
from pathlib import Path

import pytest
from meaning_models import FakeEmbeddings, concept_vectors
from polling import wait_for

from alpd.services.history.meaning import EMBED_BATCH
from alpd.testing.daemon import running_daemon

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "integration"))
from transcripts import Claude

pytestmark = pytest.mark.chaos
pytest.importorskip("numpy")

UNITS = 600


@pytest.mark.both_stores
def test_kill9_mid_build_resumes_without_embedding_done_units_again(
    tmp_path: Path, store_url: str | None
) -> None:
    vectors = concept_vectors({"a": ["alpha", "beta"]}, [f"w{i}" for i in range(50)])
    with FakeEmbeddings(vectors) as fake:
        fake.delay = 0.15
        config = tmp_path / "config.toml"
        config.write_text(
            f'[search]\nembedder = "openai"\nmodel = "fake"\nendpoint = "{fake.url}"\n'
        )
        sessions = tmp_path / "sessions"
        sessions.mkdir()
        claude = Claude()
        (sessions / f"{claude.session}.jsonl").write_bytes(
            b"".join(claude.prompt(f"prompt number {i} alpha w{i % 50}") for i in range(UNITS))
        )
        env = {"ALP_STORE_URL": store_url} if store_url else {}
        with running_daemon(tmp_path, extra_args=["--config", str(config)], extra_env=env) as d:
            d.call("history/import", {"runtime": "claude", "path": str(sessions)})
            wait_for(lambda: len(fake.texts) > 3 * EMBED_BATCH, timeout=60, what="a few batches")
            d.kill9()
            before = len(fake.texts)
            assert before < UNITS, "the build finished before the kill: slow the fake down"
            time.sleep(0.5)
            d.restart()

            def built() -> bool:
                state = d.call("daemon/status", {})["search"]  # type: ignore[index]
                return bool(state["state"] == "ready" and state.get("embedded") == UNITS)

            wait_for(built, timeout=120, what="the rebuilt index")
        embedded = [text for text in fake.texts if text != "alp"]
        counts = collections.Counter(embedded)
        assert set(counts) == {f"prompt number {i} alpha w{i % 50}" for i in range(UNITS)}
        again = sum(n - 1 for n in counts.values())
        assert again <= EMBED_BATCH, f"{again} units embedded twice"
