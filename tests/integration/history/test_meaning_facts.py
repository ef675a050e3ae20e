"""The meaning leg's filters read from memory (`alpd.services.history.chunk_facts`, docs/
search.md "The filters in memory") against a real alpd, on both stores: what the leg knows
of each row it loaded follows the history after it was loaded — a run that grows (the chunk
it replaced never comes back, a keyword hit on its new entry is the same hit), a thread
cleared and a root undone (their hits labelled as keyword search labels them), another
model's index rebuilt — and, on the same data, the filters in memory give exactly what the
SQL filter gives, for random filters and candidates."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from daemons import StartAlpd
from polling import wait_for
from store_access import raw_db
from test_meaning_search import CONCEPTS, config_for, model_dir, ready, search, status_search
from transcripts import Claude

from alpd.testing.daemon import DaemonProcess

pytest.importorskip("model2vec")
pytestmark = pytest.mark.both_stores

PRICING_RUN = " ".join(["price plans tiers monthly yearly pricing"] * 20)  # > 800: two chunks
TAIL = "the cat sat on the mat with the dogs"


def new_thread(d: DaemonProcess, work: Path, title: str) -> str:
    thread = d.call("thread/create", {"title": title, "cwd": str(work)})
    assert isinstance(thread, dict)
    return str(thread["id"])


def run_root(d: DaemonProcess, thread_id: str, work: Path) -> str:
    """A headless root to its end; its execution id."""
    started = d.call(
        "thread/continue",
        {
            "threadId": thread_id,
            "headless": True,
            "args": ["sh", "-c", "true"],
            "cwd": str(work),
            "runtime": "command",
        },
    )
    assert isinstance(started, dict)
    execution_id = str(started["execution"]["id"])

    def done() -> bool:
        shown = d.call("execution/wait", {"executionId": execution_id, "timeout": 2})
        return isinstance(shown, dict) and shown["status"] == "settled"

    wait_for(done, timeout=20, what=f"{execution_id} to settle")
    return execution_id


def give_history(d: DaemonProcess, thread_id: str, execution_id: str, transcript: bytes,
                 base: Path) -> None:  # fmt: skip
    """Root `execution_id`'s transcript is `transcript` (written again when it grew), copied
    into history by the thread's sync."""
    path = base / f"{execution_id}.jsonl"
    path.write_bytes(transcript)
    with raw_db(d) as conn:
        conn.execute(
            "UPDATE executions SET transcript_path = ?, history_level = NULL WHERE id = ?",
            (str(path), execution_id),
        )
    d.call("thread/sync", {"threadId": thread_id})


def synced(d: DaemonProcess, text: str) -> None:
    wait_for(
        lambda: bool(search(d, f'"{text}"', mode="keyword")["hits"]),
        timeout=30,
        what=f"{text!r} to be copied",
    )


def indexed(d: DaemonProcess) -> None:
    """Every history entry cut into units and every chunk embedded, read from the database
    (the state `daemon/status` shows is the builder's last step's)."""

    def caught_up() -> bool:
        with raw_db(d) as conn:
            return bool(
                conn.execute(
                    "SELECT (SELECT entry_id FROM search_index_cursor) = "
                    "(SELECT coalesce(max(id), 0) FROM history_entries) AND "
                    "(SELECT max(embedded_through) FROM search_generations) >= "
                    "(SELECT coalesce(max(id), 0) FROM search_chunks)"
                ).fetchone()[0]
            )

    ready(d)
    wait_for(caught_up, timeout=60, what="the meaning index to catch up")


def pricing_run(
    d: DaemonProcess, thread_id: str, work: Path, base: Path
) -> tuple[str, Claude, bytes]:
    """A root whose run is two chunks (pricing words, then a tail about cats), copied and
    indexed: the root, its transcript's writer and the transcript."""
    root = run_root(d, thread_id, work)
    claude = Claude()
    transcript = claude.prompt("what should the subscription look like?") + claude.reply(
        f"{PRICING_RUN} {TAIL}"
    )
    give_history(d, thread_id, root, transcript, base)
    synced(d, "subscription look like")
    indexed(d)
    return root, claude, transcript


def entries(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [hit for hit in result["hits"] if hit["source"] == "entry"]


def test_a_run_that_grows_after_the_matrix_was_loaded_is_found_as_it_is_now(
    start_alpd: StartAlpd, tmp_path: Path, work: Path
) -> None:
    """A run of two chunks (pricing words, then a tail about cats) is loaded by a search;
    the run grows (a reply about deploying): its last chunk is replaced, its unit's last
    entry moves. The replaced chunk never answers again (a search for cats shows the run as
    it is now, not a chunk that no longer exists), the new chunk is embedded under a new id,
    and a keyword hit on the new reply is the run's hit, not a hit of its own."""
    d = start_alpd(config_for(model_dir(tmp_path)))
    thread_id = new_thread(d, work, "grows")
    root, claude, transcript = pricing_run(d, thread_id, work, tmp_path)
    before = search(d, "cats", mode="meaning")["hits"]  # loads the matrix and its facts
    assert TAIL in " ".join(before[0]["snippet"].split())
    with raw_db(d) as conn:
        (old_last,) = conn.execute("SELECT max(id) FROM search_chunks").fetchone()

    give_history(
        d, thread_id, root, transcript + claude.reply("deployed the pricing to staging"),
        tmp_path,
    )  # fmt: skip
    synced(d, "deployed the pricing to staging")
    indexed(d)
    with raw_db(d) as conn:
        ids = [row[0] for row in conn.execute("SELECT id FROM search_chunks ORDER BY id")]
        unembedded = conn.execute(
            "SELECT count(*) FROM search_chunks c WHERE NOT EXISTS "
            "(SELECT 1 FROM search_vectors v WHERE v.digest = c.digest)"
        ).fetchone()[0]
    assert old_last not in ids and max(ids) > old_last and unembedded == 0

    cats = search(d, "cats", mode="meaning")["hits"]
    assert "deployed the pricing to staging" in cats[0]["snippet"]
    hybrid = search(d, "pricing")["hits"]
    run = [
        (hit["legs"], hit["entryId"])
        for hit in entries({"hits": hybrid})
        if hit.get("threadId") == thread_id and hit.get("role") == "assistant"
    ]
    # the run's unit (its first chunk, loaded before it grew, is its best) holds both the
    # first reply and the new one: one hit, found by both legs
    assert len(run) == 1 and run[0][0] == ["keyword", "meaning"], run


def test_a_thread_cleared_and_undone_after_the_matrix_was_loaded_labels_as_keyword_does(
    start_alpd: StartAlpd, tmp_path: Path, work: Path
) -> None:
    d = start_alpd(config_for(model_dir(tmp_path)))
    thread_id = new_thread(d, work, "labels")
    roots = [run_root(d, thread_id, work) for _ in range(3)]
    words = ["pricing plans", "cats on the mat", "deployed to staging"]
    for root, text in zip(roots, words, strict=True):
        claude = Claude()
        give_history(d, thread_id, root, claude.prompt(text) + claude.reply(text), tmp_path)
        synced(d, text)
    indexed(d)
    loaded = {text: search(d, text, threadId=thread_id)["hits"] for text in words}
    assert all(not hit.get("labels") for hits in loaded.values() for hit in hits)

    d.call("thread/clear", {"threadId": thread_id})
    later = run_root(d, thread_id, work)
    claude = Claude()
    give_history(d, thread_id, later, claude.prompt("yearly tiers") + claude.reply("ok"), tmp_path)
    synced(d, "yearly tiers")
    d.call("thread/undo", {"threadId": thread_id})
    indexed(d)
    for text in [*words, "yearly tiers"]:
        keyword = entries(search(d, f'"{text}"', mode="keyword", threadId=thread_id))
        labels = {hit["entryId"]: hit.get("labels") for hit in keyword}
        assert keyword and all(labels.values()), (text, keyword)
        for mode in ("hybrid", "meaning"):
            for hit in entries(search(d, text, mode=mode, threadId=thread_id)):
                if hit["entryId"] in labels:
                    assert hit.get("labels") == labels[hit["entryId"]], (mode, text, hit)
                else:
                    assert hit.get("labels"), (mode, text, hit)


def _blocking(conn: Any) -> Any:
    """The store's blocking connection under a test's raw one (PostgreSQL's translates)."""
    return getattr(conn, "_conn", conn)


def test_the_filters_in_memory_give_what_the_sql_filter_gives(
    start_alpd: StartAlpd, tmp_path: Path, work: Path
) -> None:
    """On one history — two threads of `command` roots, a Claude import (no thread) —
    random filters (owner, thread, runtime, role; known, unknown and absent) and random
    candidates (any of the chunks the matrix holds), in memory and in SQL, read on the same
    connection."""
    from alpd.services.history import chunk_facts
    from alpd.services.history.meaning_leg import LegPlan, empty_facts, empty_matrix, extended_on
    from alpd.store.history import vector_hits
    from alpd.store.history.vectors import generations
    from protocol import messages as m

    d = start_alpd(config_for(model_dir(tmp_path)))
    vocabulary = [w for words in CONCEPTS.values() for w in words]
    rng = random.Random(26)
    threads = [new_thread(d, work, f"t{i}") for i in range(2)]
    for thread_id in threads:
        for _ in range(2):
            root = run_root(d, thread_id, work)
            claude = Claude()
            lines = b"".join(
                claude.prompt(" ".join(rng.choices(vocabulary, k=6)))
                + claude.reply(" ".join(rng.choices(vocabulary, k=rng.choice([8, 300]))))
                for _ in range(3)
            )
            give_history(d, thread_id, root, lines, tmp_path)
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    claude = Claude()
    (sessions / f"{claude.session}.jsonl").write_bytes(
        claude.prompt("the cat sat on the mat") + claude.reply("tiers monthly and yearly")
    )
    d.call("history/import", {"runtime": "claude", "path": str(sessions)})
    wait_for(lambda: len(search(d, "cat", mode="keyword")["hits"]) > 0, timeout=30, what="imports")
    indexed(d)

    with raw_db(d) as raw:
        conn = _blocking(raw)
        generation = generations(conn)[-1]
        plan = LegPlan(
            generation,
            None,
            empty_matrix(generation),
            empty_facts(),
            None,
            "",  # type: ignore[arg-type]
        )
        matrix, facts = extended_on(plan, conn)
        owners = [row[0] for row in conn.execute("SELECT DISTINCT owner_uid FROM executions")]
        runtimes = [row[0] for row in conn.execute("SELECT DISTINCT runtime FROM executions")]
        ids = [int(i) for i in matrix.ids[: matrix.count]]
        assert len(ids) > 20 and len(facts.executions.ids) >= 5
        assert {"claude", "command"} <= set(runtimes)
        for _ in range(60):
            params = m.HistorySearchParams(
                query="q",
                thread_id=rng.choice([None, *threads, "no-such-thread"]),
                runtime=rng.choice([None, *runtimes, "codex"]),
                role=rng.choice([None, "user", "assistant", "tool"]),
            )
            uid = rng.choice([*owners, 4242])
            chosen = rng.sample(ids, rng.randint(1, len(ids)))
            rows = matrix.ids[: matrix.count].searchsorted(chosen)
            in_memory = chunk_facts.candidates(facts, matrix.ids, rows, uid, params)
            in_sql = vector_hits.meaning_candidates(conn, uid, params, chosen)
            assert in_memory == in_sql, params
            passing = chunk_facts.passing_rows(facts, uid, params)
            allowed = set(vector_hits.filtered_chunk_ids(conn, uid, params)) & set(ids)
            assert [ids[row] for row in passing] == sorted(allowed), params


def db_counts(d: DaemonProcess) -> tuple[int, int, int]:
    """(entries not cut yet, chunks, chunks embedded) counted in the database."""
    with raw_db(d) as conn:
        row = conn.execute(
            "SELECT (SELECT count(*) FROM history_entries WHERE id > "
            "(SELECT entry_id FROM search_index_cursor)), "
            "(SELECT count(*) FROM search_chunks), "
            "(SELECT count(*) FROM search_chunks WHERE id <= "
            "(SELECT max(embedded_through) FROM search_generations))"
        ).fetchone()
    return int(row[0]), int(row[1]), int(row[2])


def shown_counts(d: DaemonProcess) -> tuple[int, int, int]:
    state = status_search(d)
    return state.get("pendingEntries", 0), state.get("total", 0), state.get("embedded", 0)


def test_the_counts_shown_follow_the_history_as_it_grows(
    start_alpd: StartAlpd, tmp_path: Path, work: Path
) -> None:
    """The builder keeps the counts it showed while nothing moved (the cursor, the last
    entry and chunk, the embedded mark) rather than counting again: they must still be the
    database's after a new root's history is cut and embedded, and after a run grows in
    place."""
    d = start_alpd(config_for(model_dir(tmp_path)))
    thread_id = new_thread(d, work, "counts")
    first, claude, transcript = pricing_run(d, thread_id, work, tmp_path)
    wait_for(lambda: shown_counts(d) == db_counts(d), timeout=30, what="the counts shown")
    _, chunks, _ = db_counts(d)

    second = run_root(d, thread_id, work)
    other = Claude()
    give_history(
        d, thread_id, second, other.prompt("deploy it") + other.reply("deployed to staging"),
        tmp_path,
    )  # fmt: skip
    synced(d, "deployed to staging")
    indexed(d)
    wait_for(lambda: shown_counts(d) == db_counts(d), timeout=30, what="the new chunks shown")
    assert db_counts(d)[1] > chunks

    give_history(
        d, thread_id, first, transcript + claude.reply("and the yearly plan is cheaper"),
        tmp_path,
    )  # fmt: skip
    synced(d, "the yearly plan is cheaper")
    indexed(d)
    wait_for(lambda: shown_counts(d) == db_counts(d), timeout=30, what="the grown run shown")
