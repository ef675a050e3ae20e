"""`history/search` and `alp search` against a real alpd: bm25 order, snippets, filters,
CJK (trigram and the short-term LIKE fallback), Vietnamese folding, FTS syntax in queries; on
both stores (on PostgreSQL: the GIN indexes of docs/many-machines.md)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from daemons import StartAlpd
from polling import wait_for
from store_access import raw_db
from transcripts import Claude, Codex

from alpctl.client import RpcError
from alpd.errors import HistoryEntryTampered
from alpd.services.history.labels import recap_entries
from alpd.store.db import open_store
from alpd.testing.daemon import DaemonProcess, running_daemon

pytestmark = pytest.mark.both_stores


def search(d: DaemonProcess, query: str, **params: Any) -> dict[str, Any]:
    result = d.call("history/search", {"query": query, **params})
    assert isinstance(result, dict)
    return result


@pytest.fixture(scope="module")
def d(
    tmp_path_factory: pytest.TempPathFactory, module_store_url: str | None
) -> Iterator[DaemonProcess]:
    base = tmp_path_factory.mktemp("search")
    store_env = {"ALP_STORE_URL": module_store_url} if module_store_url else {}
    with running_daemon(base, extra_env=store_env) as daemon:
        sessions = base / "claude"
        sessions.mkdir()
        claude = Claude()
        (sessions / f"{claude.session}.jsonl").write_bytes(
            b"".join(
                [
                    claude.prompt("zebra zebra zebra migration", ts="2026-11-01T10:00:00.000Z"),
                    claude.reply(
                        "the migration plan mentions a zebra once among many other words about "
                        "databases, tables, indexes, queries, caches and their invalidation",
                        ts="2026-11-02T10:00:00.000Z",
                    ),
                    claude.prompt("我们使用中文搜索功能", ts="2026-11-03T10:00:00.000Z"),
                    claude.reply("東京タワーに行きました", ts="2026-11-03T10:01:00.000Z"),
                    claude.prompt(
                        "Đường đi đến thành phố Hồ Chí Minh", ts="2026-11-04T10:00:00.000Z"
                    ),
                    claude.tool_call("Bash", {"command": "grep -rn wombat ."}, "toolu_1"),
                    claude.tool_result("src/a.py:3: wombat = 1", "toolu_1"),
                ]
            )
        )
        codex_dir = base / "codex"
        codex = Codex()
        codex.path_in(codex_dir).write_bytes(codex.meta() + codex.prompt("zebra in codex land"))
        daemon.call("history/import", {"runtime": "claude", "path": str(sessions)})
        daemon.call("history/import", {"runtime": "codex", "path": str(codex_dir)})
        threaded_root(daemon, base)
        yield daemon


def threaded_root(d: DaemonProcess, base: Path) -> str:
    """A thread titled about quokkas whose root #1 has a transcript mentioning them; its id."""
    thread = d.call("thread/create", {"title": "Quokka habitat survey", "cwd": str(base)})
    assert isinstance(thread, dict)
    started = d.call(
        "thread/continue",
        {"threadId": thread["id"], "runtime": "command", "headless": True, "args": ["true"]},
    )
    assert isinstance(started, dict)
    execution_id = started["execution"]["id"]
    d.call("execution/wait", {"executionId": execution_id, "timeout": 30})
    claude = Claude()
    transcript = base / "root.jsonl"
    transcript.write_bytes(claude.prompt("quokka notes for the survey, draft one"))
    with raw_db(d) as conn:
        conn.execute(
            "UPDATE executions SET transcript_path = ?, history_level = NULL WHERE id = ?",
            (str(transcript), execution_id),
        )
    d.call("thread/sync", {"threadId": thread["id"]})
    return str(thread["id"])


def test_bm25_puts_the_densest_match_first_with_a_highlighted_snippet(d: DaemonProcess) -> None:
    result = search(d, "zebra")
    assert result["index"] == "words"
    snippets = [hit["snippet"] for hit in result["hits"]]
    assert len(snippets) == 3
    assert snippets[0].startswith("**zebra** **zebra** **zebra** migration")
    assert all("**zebra**" in s for s in snippets)
    scores = [hit["score"] for hit in result["hits"]]
    assert scores == sorted(scores)


def test_hits_say_where_they_are(d: DaemonProcess) -> None:
    (hit,) = [h for h in search(d, "zebra")["hits"] if h["runtime"] == "codex"]
    assert hit["legacy"] is True
    assert hit["source"] == "entry"
    assert hit["role"] == "user" and hit["kind"] == "prompt"
    assert hit["executionId"].startswith("exec_")
    assert "threadId" not in hit


def test_filters_runtime_role_and_time(d: DaemonProcess) -> None:
    assert {h["runtime"] for h in search(d, "zebra", runtime="codex")["hits"]} == {"codex"}
    assistant = search(d, "zebra", role="assistant")["hits"]
    assert [h["kind"] for h in assistant] == ["reply"]
    later = search(d, "zebra", runtime="claude", since="2026-11-02T00:00:00.000Z")["hits"]
    assert [h["at"] for h in later] == ["2026-11-02T10:00:00.000Z"]
    earlier = search(d, "zebra", runtime="claude", until="2026-11-01T23:00:00.000Z")["hits"]
    assert [h["at"] for h in earlier] == ["2026-11-01T10:00:00.000Z"]
    assert search(d, "zebra", limit=1)["hits"][0]["snippet"].startswith("**zebra**")


def test_thread_titles_and_root_entries_are_found_and_filtered_by_thread(
    d: DaemonProcess,
) -> None:
    hits = wait_for(lambda: len(search(d, "quokka")["hits"]) == 2 and search(d, "quokka")["hits"])
    by_source = {h["source"]: h for h in hits}
    assert by_source["thread"]["threadTitle"] == "Quokka habitat survey"
    entry = by_source["entry"]
    assert (entry["threadTitle"], entry["sequence"], entry.get("legacy", False)) == (
        "Quokka habitat survey",
        1,
        False,
    )
    thread_id = entry["threadId"]
    assert {h["threadId"] for h in search(d, "quokka", threadId=thread_id)["hits"]} == {thread_id}
    assert search(d, "zebra", threadId=thread_id)["hits"] == []


@pytest.mark.parametrize(
    ("query", "index"),
    [("中文搜索", "trigram"), ("中文", "like"), ("タワー", "trigram"), ("東京", "like")],
)
def test_cjk_queries(d: DaemonProcess, query: str, index: str) -> None:
    result = search(d, query)
    assert result["index"] == index
    assert len(result["hits"]) == 1
    assert f"**{query}**" in result["hits"][0]["snippet"]


@pytest.mark.parametrize(
    ("query", "marked"),
    [
        ("duong", ["Đường"]),
        ("đường", ["Đường"]),
        ("Đường", ["Đường"]),
        ("DUONG", ["Đường"]),
        ("thanh pho", ["thành", "phố"]),
        ("ho chi minh", ["Hồ", "Chí", "Minh"]),
    ],
)
def test_vietnamese_diacritics_fold(d: DaemonProcess, query: str, marked: list[str]) -> None:
    hits = search(d, query)["hits"]
    assert len(hits) == 1
    # The words the folded query matched are highlighted in the stored (unfolded) text, and
    # only they are.
    assert re.findall(r"\*\*(.+?)\*\*", hits[0]["snippet"]) == marked, hits[0]["snippet"]


def test_tool_inputs_and_output_tails_are_searchable(d: DaemonProcess) -> None:
    kinds = {h["kind"] for h in search(d, "wombat")["hits"]}
    assert kinds == {"tool_call", "tool_result"}


@pytest.mark.parametrize(
    "query",
    [
        '"',
        'zebra"',
        "AND",
        "zebra AND",
        "OR zebra NOT",
        "NEAR(zebra migration)",
        "body:zebra",
        "col:",
        "zebra*",
        "*",
        "-zebra",
        "^zebra",
        "(zebra",
        "zebra)",
        "{zebra migration}",
        "'; DROP TABLE history_entries; --",
        "a" * 5000,
        "zebra " * 100,
        "\\",
        "%_",
        "中",
        "\x00",
    ],
)
def test_fts_syntax_in_queries_is_never_an_error(d: DaemonProcess, query: str) -> None:
    result = search(d, query)
    assert isinstance(result["hits"], list)


def test_prefix_and_phrase(d: DaemonProcess) -> None:
    assert len(search(d, "zeb*")["hits"]) == 3
    assert len(search(d, '"zebra migration"')["hits"]) == 1


def test_cli_prints_title_root_time_snippet_and_how_to_open(d: DaemonProcess) -> None:
    done = d.cli("search", "quokka")
    assert done.returncode == 0, done.stderr
    assert "Quokka habitat survey  root #1" in done.stdout
    assert "→ alp thread show thread_" in done.stdout
    assert "**quokka** notes" in done.stdout
    legacy = d.cli("search", "codex", "land", "--runtime", "codex")
    assert "(legacy codex session" in legacy.stdout
    assert "→ alp execution show exec_" in legacy.stdout
    none = d.cli("search", "nothingmatchesthis")
    assert none.returncode == 0 and "no matches" in none.stdout
    bad = d.cli("search", "zebra", "--since", "yesterday-ish")
    assert bad.returncode == 2


def test_a_filter_on_a_missing_thread_is_an_error_whatever_the_query(d: DaemonProcess) -> None:
    for query in ("zebra", "中文", "中文搜索", "***"):
        with pytest.raises(RpcError) as info:
            search(d, query, threadId="thread_nope")
        assert info.value.name == "THREAD_NOT_FOUND", query


@pytest.mark.parametrize("column", ["native_id", "byte_offset", "copy_of"])
def test_an_entry_edited_in_any_digested_column_is_refused_with_or_without_a_thread_filter(
    start_alpd: StartAlpd, tmp_path: Path, column: str
) -> None:
    d = start_alpd()
    thread_id = threaded_root(d, tmp_path)
    hits = wait_for(lambda: [h for h in search(d, "quokka")["hits"] if h["source"] == "entry"])
    assert search(d, "quokka", threadId=thread_id)["hits"]
    postgres = "ALP_STORE_URL" in d.env
    with raw_db(d, admin=True) as conn:
        (entry_id,) = conn.execute(
            "SELECT h.id FROM history_entries h WHERE h.execution_id = ?", (hits[0]["executionId"],)
        ).fetchone()
        value = {"native_id": "'forged'", "byte_offset": "byte_offset + 1"}.get(column, "id")
        if postgres:  # this session only: no trigger, no foreign key (the admin's to set)
            conn.execute("SET session_replication_role = replica")
        else:
            (trigger,) = conn.execute(
                "SELECT sql FROM sqlite_master WHERE name = 'history_entries_immutable'"
            ).fetchone()
            conn.execute("DROP TRIGGER history_entries_immutable")
            conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute(f"UPDATE history_entries SET {column} = {value} WHERE id = ?", (entry_id,))
        if not postgres:
            conn.execute(trigger)  # put back, so the schema check of `Store.open` passes
    for params in ({}, {"threadId": thread_id}):
        with pytest.raises(RpcError) as info:
            search(d, "quokka", **params)
        assert info.value.name == "HISTORY_ENTRY_TAMPERED", params
        assert info.value.data["entryId"] == entry_id

    async def recap_reads() -> None:
        store = await open_store(d.home, d.env.get("ALP_STORE_URL"))
        try:
            await recap_entries(store, thread_id)
        finally:
            await store.close()

    if column == "copy_of":
        anyio.run(recap_reads)  # a recap reads no copies: the forged one is not read at all
        return
    with pytest.raises(HistoryEntryTampered) as refused:
        anyio.run(recap_reads)
    assert refused.value.data["entryId"] == entry_id
