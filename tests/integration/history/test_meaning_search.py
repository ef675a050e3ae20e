"""Search by meaning against a real alpd (docs/search.md), with a model2vec model the test
builds (real loading code, nothing downloaded) and a fake OpenAI-compatible endpoint on
127.0.0.1: a paraphrase keyword search cannot find is found by meaning; hybrid fuses both
legs with keyword search's filters and labels; the index's state is shown in `history/search`,
`daemon/status`, `daemon/ps` and `alp search`; a changed model rebuilds while the old
generation answers; units are the person's turns and runs of assistant text, never tool
output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from daemons import StartAlpd
from meaning_models import FakeEmbeddings, concept_vectors, write_static_model
from polling import wait_for
from store_access import raw_db
from transcripts import Claude

from alpctl.client import RpcError
from alpd.testing.daemon import DaemonProcess

pytest.importorskip("model2vec")
pytestmark = pytest.mark.both_stores

PRICING = ["price", "priced", "pricing", "plans", "plan", "tiers", "tier", "monthly", "yearly"]
CONCEPTS = {
    "pricing": PRICING,
    "animals": ["cat", "cats", "dog", "dogs", "mat"],
    "deploy": ["deploy", "deployed", "release", "rollout", "staging"],
}
OTHER = ["how", "did", "we", "the", "decision", "three", "and", "billing", "on", "sat", "a"]
#: shares no word with the query below: keyword search cannot find it
DECISION = "Decision: three tiers, monthly and yearly billing."
QUERY = "how did we price the plans"


def model_dir(base: Path, name: str = "model", seed: int = 7) -> Path:
    return write_static_model(base / name, concept_vectors(CONCEPTS, OTHER, seed=seed))


def config_for(model: Path) -> str:
    return f'[search]\nembedder = "model2vec"\nmodel = "{model}"\n'


def import_history(d: DaemonProcess, base: Path) -> None:
    sessions = base / "sessions"
    sessions.mkdir(exist_ok=True)
    claude = Claude()
    (sessions / f"{claude.session}.jsonl").write_bytes(
        b"".join(
            [
                claude.prompt("what should the subscription look like?"),
                claude.reply(DECISION),
                claude.tool_call("Bash", {"command": "echo tiers"}, "toolu_1"),
                claude.tool_result("monthly yearly tiers pricing plans", "toolu_1"),
                claude.reply("I wrote it down in the notes."),
                claude.prompt("the cat sat on the mat"),
                claude.reply("we deployed the release to staging"),
            ]
        )
    )
    d.call("history/import", {"runtime": "claude", "path": str(sessions)})


def status_search(d: DaemonProcess) -> dict[str, Any]:
    status = d.call("daemon/status", {})
    assert isinstance(status, dict)
    return dict(status["search"])


def caught_up(state: dict[str, Any]) -> bool:
    return (
        state["state"] == "ready"
        and state.get("pendingEntries", 0) == 0
        and state.get("embedded", 0) == state.get("total", 0) > 0
    )


def ready(d: DaemonProcess) -> dict[str, Any]:
    """The index's state once every entry imported is cut and every chunk embedded."""
    return wait_for(
        lambda: caught_up(s := status_search(d)) and s,
        timeout=60,
        what="the meaning index to be ready",
    )


def search(d: DaemonProcess, query: str, **params: Any) -> dict[str, Any]:
    result = d.call("history/search", {"query": query, **params})
    assert isinstance(result, dict)
    return result


def texts(result: dict[str, Any]) -> list[str]:
    return [hit["snippet"].replace("**", "") for hit in result["hits"]]


def test_a_paraphrase_is_found_by_meaning_that_keyword_search_misses(
    start_alpd: StartAlpd, tmp_path: Path
) -> None:
    d = start_alpd(config_for(model_dir(tmp_path)))
    import_history(d, tmp_path)
    state = ready(d)
    assert state["embedder"] == "model2vec" and state["embedded"] == state["total"] > 0
    keyword = search(d, QUERY, mode="keyword")
    assert all("three tiers" not in text for text in texts(keyword))
    meaning = search(d, QUERY, mode="meaning")
    assert meaning["mode"] == "meaning"
    assert texts(meaning)[0] == DECISION + " I wrote it down in the notes."
    assert meaning["hits"][0]["role"] == "assistant" and meaning["hits"][0]["legs"] == ["meaning"]
    hybrid = search(d, QUERY)
    assert hybrid["mode"] == "hybrid" and "notice" not in hybrid
    assert DECISION in texts(hybrid)[0]
    # a word both legs find: one hit, found by both
    both = search(d, "deployed")
    assert both["hits"][0]["legs"] == ["keyword", "meaning"]
    assert [h["snippet"] for h in both["hits"]].count(both["hits"][0]["snippet"]) == 1


def test_tool_output_is_never_embedded_and_units_are_turns_and_runs(
    start_alpd: StartAlpd, tmp_path: Path
) -> None:
    with FakeEmbeddings(concept_vectors(CONCEPTS, OTHER)) as fake:
        d = start_alpd(
            f'[search]\nembedder = "openai"\nmodel = "fake-embed"\nendpoint = "{fake.url}"\n'
        )
        import_history(d, tmp_path)
        ready(d)
        embedded = [text for text in fake.texts if text != "alp"]
        assert sorted(embedded) == sorted(
            [
                "what should the subscription look like?",
                DECISION + "\n\nI wrote it down in the notes.",
                "the cat sat on the mat",
                "we deployed the release to staging",
            ]
        )
        found = search(d, QUERY, mode="meaning")
        assert DECISION in texts(found)[0]


def test_hybrid_says_so_when_no_meaning_index_can_answer(
    start_alpd: StartAlpd, tmp_path: Path
) -> None:
    d = start_alpd(config_for(tmp_path / "no-such-model"))
    import_history(d, tmp_path)
    state = wait_for(lambda: (s := status_search(d))["state"] == "off" and s, timeout=30)
    assert "no model2vec model at" in state["reason"] and "potion-base-8M" in state["reason"]
    result = search(d, "deployed")
    assert result.get("mode", "keyword") == "keyword" and "meaning index is off" in result["notice"]
    assert result["hits"]
    refused = d.cli("search", "deployed", "--mode", "meaning")
    assert refused.returncode != 0 and "SEARCH_INDEX_NOT_READY" in refused.stderr
    human = d.cli("search", "deployed")
    assert human.returncode == 0 and "keyword hits only" in human.stdout
    ps = d.cli("ps")
    assert "meaning index: off" in ps.stdout


def test_filters_and_labels_apply_to_the_meaning_leg(start_alpd: StartAlpd, tmp_path: Path) -> None:
    d = start_alpd(config_for(model_dir(tmp_path)))
    import_history(d, tmp_path)
    ready(d)
    only_user = search(d, QUERY, mode="meaning", role="user")
    assert {hit["role"] for hit in only_user["hits"]} == {"user"}
    # the best chunk of all is the decision (assistant): with limit 1 the leg's first round
    # holds no user turn, so it ranks the user turns alone and finds the best of them
    assert search(d, QUERY, mode="meaning")["hits"][0]["role"] == "assistant"
    first = search(d, QUERY, mode="meaning", role="user", limit=1)["hits"]
    assert [hit["snippet"] for hit in first] == [only_user["hits"][0]["snippet"]]
    assert search(d, QUERY, mode="meaning", since="2030-01-01")["hits"] == []
    assert search(d, QUERY, mode="meaning", runtime="codex")["hits"] == []
    out = json.loads(d.cli("search", QUERY, "--mode", "meaning", "--json").stdout)
    assert out["mode"] == "meaning" and DECISION in out["hits"][0]["snippet"]


def test_hybrid_makes_only_the_hits_it_shows_and_makes_them_as_keyword_search_does(
    start_alpd: StartAlpd, tmp_path: Path
) -> None:
    """Both legs are ids until fused (alpd.store.history.keyword_leg): the page's keyword
    hits get keyword search's marked snippet, fields and digest check all the same."""
    d = start_alpd(config_for(model_dir(tmp_path)))
    import_history(d, tmp_path)
    ready(d)
    keyword = search(d, "deployed", mode="keyword")["hits"][0]
    hybrid = search(d, "deployed")["hits"]
    assert hybrid[0]["legs"] == ["keyword", "meaning"] and "**deployed**" in hybrid[0]["snippet"]
    same = {k: v for k, v in hybrid[0].items() if k not in ("score", "legs")}
    assert same == {k: v for k, v in keyword.items() if k != "score"}
    assert len(search(d, "the")["hits"]) > 1 and len(search(d, "the", limit=1)["hits"]) == 1
    postgres = "ALP_STORE_URL" in d.env
    with raw_db(d, admin=True) as conn:
        (entry_id,) = conn.execute(
            "SELECT id FROM history_entries WHERE text = 'we deployed the release to staging'"
        ).fetchone()
        if postgres:  # this session only: no trigger (the admin's to set)
            conn.execute("SET session_replication_role = replica")
        else:
            (trigger,) = conn.execute(
                "SELECT sql FROM sqlite_master WHERE name = 'history_entries_immutable'"
            ).fetchone()
            conn.execute("DROP TRIGGER history_entries_immutable")
        conn.execute("UPDATE history_entries SET native_id = 'forged' WHERE id = ?", (entry_id,))
        if not postgres:
            conn.execute(trigger)
    with pytest.raises(RpcError) as info:
        search(d, "deployed")
    assert info.value.name == "HISTORY_ENTRY_TAMPERED"


LATER = "the rollout to staging is planned for friday"


def test_a_changed_model_rebuilds_while_the_old_generation_answers(
    start_alpd: StartAlpd, tmp_path: Path
) -> None:
    """The new model is an endpoint held midway (its requests wait on a gate), so the
    rebuild is certainly in progress while the old generation is asked; history copied
    meanwhile is embedded into the new generation too."""
    d = start_alpd(config_for(model_dir(tmp_path, "first")))
    import_history(d, tmp_path)
    ready(d)
    with FakeEmbeddings(concept_vectors(CONCEPTS, [*OTHER, "is", "for", "friday"])) as fake:
        fake.gate.clear()
        (tmp_path / "config.toml").write_text(
            f'[search]\nembedder = "openai"\nmodel = "fake-embed"\nendpoint = "{fake.url}"\n'
        )
        d.call("daemon/reload", {})
        stale = wait_for(lambda: (s := status_search(d))["state"] == "stale" and s, timeout=30)
        assert stale["model"] == "fake-embed" and stale.get("embedded", 0) < stale["total"]
        # the old generation answers, by meaning, while the new one is held
        hybrid = search(d, QUERY)
        assert hybrid["mode"] == "hybrid" and "notice" not in hybrid
        assert DECISION in texts(hybrid)[0]
        assert DECISION in texts(search(d, QUERY, mode="meaning"))[0]
        # history copied meanwhile is embedded by the new model too (cut once the batch
        # held at the gate returns)
        later = tmp_path / "later"
        later.mkdir()
        claude = Claude()
        (later / f"{claude.session}.jsonl").write_bytes(claude.prompt(LATER))
        d.call("history/import", {"runtime": "claude", "path": str(later)})
        assert status_search(d)["state"] == "stale"
        assert search(d, QUERY, mode="meaning")["mode"] == "meaning"
        fake.gate.set()
        state = ready(d)
        assert state["model"] == "fake-embed" and state["embedder"] == "openai"
        assert LATER in fake.texts
        found = search(d, "deploy release", mode="meaning")
        assert LATER in texts(found)[:2]


BLOCK_EXTRA = '''
import sys

class _NoSemanticExtra:
    """alp installed without its `semantic` extra: numpy and model2vec cannot be imported."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("numpy", "model2vec"):
            raise ImportError(f"No module named {name!r} (hidden by the test)")
        return None

sys.meta_path.insert(0, _NoSemanticExtra())
'''


def test_without_the_semantic_extra_alpd_starts_and_keyword_search_works(
    start_alpd: StartAlpd, tmp_path: Path
) -> None:
    hide = tmp_path / "no-extra"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(BLOCK_EXTRA)
    d = start_alpd(config_for(model_dir(tmp_path)), extra_env={"PYTHONPATH": str(hide)})
    import_history(d, tmp_path)
    state = wait_for(lambda: (s := status_search(d))["state"] == "off" and s, timeout=30)
    assert "numpy is not installed" in state["reason"] and "alp[semantic]" in state["reason"]
    result = search(d, "deployed")
    assert [hit["role"] for hit in result["hits"]] == ["assistant"]
    assert "keyword hits only" in result["notice"]
    assert search(d, "deployed", mode="keyword")["hits"]
