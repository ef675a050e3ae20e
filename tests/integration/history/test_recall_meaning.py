"""`bench/recall_meaning.py` (docs/search.md: measuring recall on your own history) run once,
as a person runs it, against a real alpd over a generated history with the test model: it
must keep working, and it must show what the modes are for — a paraphrase found by meaning
(and hybrid) that keyword misses, and a plain word found by all three."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from daemons import StartAlpd
from test_meaning_search import QUERY, config_for, import_history, model_dir, ready

pytest.importorskip("model2vec")

REPO = Path(__file__).resolve().parents[3]


def test_the_recall_script_measures_each_mode_on_a_generated_history(
    start_alpd: StartAlpd, tmp_path: Path
) -> None:
    d = start_alpd(config_for(model_dir(tmp_path)))
    import_history(d, tmp_path)
    ready(d)
    queries = tmp_path / "queries.json"
    queries.write_text(
        json.dumps(
            [
                {"query": QUERY, "expect": "three tiers"},
                {"query": "deployed", "expect": "release to staging"},
            ]
        )
    )
    script = REPO / "bench" / "recall_meaning.py"
    argv = [sys.executable, str(script), str(queries), "--k", "3"]
    done = subprocess.run(
        [*argv, "--socket", str(d.socket_path), "--json"],
        capture_output=True, text=True, timeout=60, cwd=REPO,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["recall"] == {"keyword": 1, "meaning": 2, "hybrid": 2}
    paraphrase, plain = result["ranks"]
    assert paraphrase["keyword"] is None and paraphrase["meaning"] == 1
    assert plain == {"query": "deployed", "keyword": 1, "meaning": 1, "hybrid": 1}
    human = subprocess.run(
        [*argv, "--socket", str(d.socket_path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert "recall@3 meaning: 2/2" in human.stdout and "recall@3 keyword: 1/2" in human.stdout
