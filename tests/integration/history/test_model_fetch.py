"""`alp model fetch` (docs/search.md): a model2vec model downloaded into alp's cache on the
person's say-so, from a fake hub on 127.0.0.1 serving a model the test built — checked
against the sizes and digests the hub lists, installed by renaming a finished directory,
and loaded by the running alpd at once (it reloads); a corrupted file installs nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from daemons import StartAlpd
from meaning_models import FakeModelHub, concept_vectors, write_static_model
from polling import wait_for
from test_meaning_search import CONCEPTS, DECISION, OTHER, QUERY, import_history, search, texts

from alpd.services.history.embedders import MODEL_FILES

pytest.importorskip("model2vec")

REPO = "minishlab/potion-base-8M"


def built_model(base: Path) -> Path:
    return write_static_model(base / "built", concept_vectors(CONCEPTS, OTHER))


def test_a_fetched_model_is_installed_checked_and_loaded(
    start_alpd: StartAlpd, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    with FakeModelHub(REPO, built_model(tmp_path)) as hub:
        env = {"XDG_CACHE_HOME": str(cache), "ALP_MODELS_URL": hub.url}
        d = start_alpd(extra_env=env)  # no [search]: the default model, not there yet
        import_history(d, tmp_path)
        off = wait_for(lambda: (s := d.call("daemon/status", {})["search"])["state"] == "off" and s)
        assert "potion-base-8M" in off["reason"]
        done = d.cli("model", "fetch", "--json", extra_env=env)
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        target = cache / "alp" / "models" / "potion-base-8M"
        assert result["model"] == str(target) and result["fetched"] and result["reloaded"]
        # the three files model2vec loads (the hub also has a README.md, not fetched)
        assert {p.name: p.read_bytes() for p in target.iterdir()} == {
            name: hub.files[name] for name in MODEL_FILES
        }
        assert [p.name for p in target.parent.iterdir()] == ["potion-base-8M"]  # no leftovers
        assert f"/api/models/{REPO}/tree/main" in hub.requests
        # the reload made alpd load it now (not in 30 s), and it answers
        wait_for(
            lambda: d.call("daemon/status", {})["search"]["state"] == "ready",
            timeout=20,
            what="the fetched model to be loaded",
        )
        assert DECISION in texts(search(d, QUERY, mode="meaning"))[0]
        again = json.loads(d.cli("model", "fetch", "--json", extra_env=env).stdout)
        assert again["fetched"] is False


def test_a_file_that_does_not_match_its_digest_installs_nothing(
    start_alpd: StartAlpd, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    with FakeModelHub(REPO, built_model(tmp_path)) as hub:
        hub.corrupt = "tokenizer.json"
        env = {"XDG_CACHE_HOME": str(cache)}
        d = start_alpd(extra_env=env)
        refused = d.cli("model", "fetch", "potion-base-8M", "--from", hub.url, extra_env=env)
        assert refused.returncode == 1
        assert "MODEL_FETCH_FAILED" in refused.stderr and "tokenizer.json" in refused.stderr
        assert list((cache / "alp" / "models").iterdir()) == []
        hub.corrupt = None
        missing = d.cli("model", "fetch", "someone/no-such", "--from", hub.url, extra_env=env)
        assert missing.returncode == 1 and "HTTP 404" in missing.stderr
        fine = d.cli("model", "fetch", "--from", hub.url, "--dir", str(tmp_path / "m"), "--json")
        assert fine.returncode == 0, fine.stderr
        assert sorted(p.name for p in (tmp_path / "m").iterdir()) == sorted(MODEL_FILES)
