"""`thread/clear` and `thread/undo` against a real alpd (issue 11, points 1 and 2).

Roots are `command` runs that pin from inside (`alp context pin …`) and exit; history is given
to a root by pointing it at a Claude transcript and syncing, as the search tests do.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from daemons import StartAlpd
from store_access import raw_db
from test_thread_invariants import (
    context,
    new_thread,
    pin_script,
    rpc_error,
    run_root,
    settled,
)
from transcripts import Claude, db

from alpctl.client import RpcError
from alpd.services.history.labels import recap_entries
from alpd.store.db import Store
from alpd.testing.daemon import DaemonProcess


@pytest.fixture(scope="module")
def d(start_module_alpd: StartAlpd) -> DaemonProcess:
    return start_module_alpd()


def step(d: DaemonProcess, method: str, thread_id: str, **params: Any) -> dict[str, Any]:
    result = d.call(method, {"threadId": thread_id, **params})
    assert isinstance(result, dict)
    return result


def content(snapshot: dict[str, Any]) -> dict[str, Any]:
    """A snapshot without its place in the chain."""
    return {k: v for k, v in snapshot.items() if k not in {"revision", "previousDigest"}}


def decisions(d: DaemonProcess, thread_id: str, revision: int | None = None) -> list[str]:
    return [line["text"] for line in context(d, thread_id, revision)["snapshot"]["decisions"]]


def give_history(
    d: DaemonProcess, thread_id: str, execution_id: str, text: str, base: Path
) -> None:
    """Root `execution_id` gets a transcript holding `text`, copied into history."""
    claude = Claude()
    transcript = base / f"{execution_id}.jsonl"
    transcript.write_bytes(claude.prompt(text) + claude.reply(f"noted: {text}"))
    with raw_db(d) as conn:  # either backend
        conn.execute(
            "UPDATE executions SET transcript_path = ?, history_level = NULL WHERE id = ?",
            (str(transcript), execution_id),
        )
    d.call("thread/sync", {"threadId": thread_id})


def test_clear_writes_an_empty_chained_revision_and_keeps_the_old_one(
    d: DaemonProcess, work: Path
) -> None:
    thread_id = new_thread(d, work)
    run_root(d, thread_id, pin_script(("objective", "ship it"), ("decision", "use sqlite")), work)
    before = context(d, thread_id)
    result = step(d, "thread/clear", thread_id)
    after = context(d, thread_id)
    assert result["step"]["kind"] == "clear"
    assert result["step"]["revision"] == after["revision"] == before["revision"] + 1
    assert result["step"]["replacedRevision"] == before["revision"]
    assert result["step"]["by"].startswith("uid:") and result["step"]["door"] == "cli"
    assert result["digest"] == after["digest"]
    snapshot = after["snapshot"]
    assert snapshot["previousDigest"] == before["digest"]
    assert snapshot["objective"] is None and snapshot["outcomes"] == []
    assert all(snapshot[group] == [] for group in ("decisions", "constraints", "openItems"))
    assert context(d, thread_id, before["revision"]) == before
    # the next root opens on the empty context and builds from there
    root = run_root(d, thread_id, pin_script(("decision", "after the clear")), work)
    assert root["policy"]["binding"]["contextRevision"] == after["revision"]
    assert decisions(d, thread_id) == ["after the clear"]


def test_undo_restores_exactly_what_the_last_root_opened_on(d: DaemonProcess, work: Path) -> None:
    thread_id = new_thread(d, work)
    run_root(d, thread_id, pin_script(("decision", "one")), work)
    second = run_root(d, thread_id, pin_script(("decision", "two")), work)
    opened_on = second["policy"]["binding"]["contextRevision"]
    result = step(d, "thread/undo", thread_id)
    assert result["step"]["executionId"] == second["id"]
    assert result["step"]["restoredRevision"] == opened_on
    now = context(d, thread_id)
    assert content(now["snapshot"]) == content(context(d, thread_id, opened_on)["snapshot"])
    assert now["snapshot"]["previousDigest"] == context(d, thread_id, now["revision"] - 1)["digest"]
    assert decisions(d, thread_id) == ["one"]
    assert decisions(d, thread_id, now["revision"] - 1) == ["one", "two"]


def test_repeated_undo_walks_back_one_root_at_a_time_and_stops_at_a_clear(
    d: DaemonProcess, work: Path
) -> None:
    thread_id = new_thread(d, work)
    run_root(d, thread_id, pin_script(("decision", "before")), work)
    step(d, "thread/clear", thread_id)
    roots = [run_root(d, thread_id, pin_script(("decision", t)), work) for t in "abc"]
    undone = [step(d, "thread/undo", thread_id)["step"]["executionId"] for _ in roots]
    assert undone == [r["id"] for r in reversed(roots)]
    assert decisions(d, thread_id) == []
    error = rpc_error(d, "thread/undo", {"threadId": thread_id})
    assert error.name == "THREAD_NOTHING_TO_UNDO"
    assert "since the clear" in error.message and "--rev" in error.message
    # a root after the undos is undone next, and only it
    again = run_root(d, thread_id, pin_script(("decision", "d")), work)
    assert step(d, "thread/undo", thread_id)["step"]["executionId"] == again["id"]
    assert rpc_error(d, "thread/undo", {"threadId": thread_id}).name == "THREAD_NOTHING_TO_UNDO"


def test_undo_of_a_thread_without_roots_is_nothing_to_undo(d: DaemonProcess, work: Path) -> None:
    thread_id = new_thread(d, work)
    assert rpc_error(d, "thread/undo", {"threadId": thread_id}).name == "THREAD_NOTHING_TO_UNDO"


@pytest.mark.parametrize("method", ["thread/clear", "thread/undo"])
def test_a_step_is_refused_while_a_root_runs(d: DaemonProcess, work: Path, method: str) -> None:
    thread_id = new_thread(d, work)
    run_root(d, thread_id, "true", work)
    started = d.call(
        "thread/continue",
        {
            "threadId": thread_id,
            "runtime": "command",
            "headless": True,
            "args": ["sleep", "30"],
            "cwd": str(work),
        },
    )
    assert isinstance(started, dict)
    revision = context(d, thread_id)["revision"]
    try:
        error = rpc_error(d, method, {"threadId": thread_id})
        assert error.name == "THREAD_BUSY"
        assert error.data["busyRoot"] == started["execution"]["id"]
        assert context(d, thread_id)["revision"] == revision
    finally:
        d.call("execution/cancel", {"executionId": started["execution"]["id"]})


@pytest.mark.parametrize("method", ["thread/clear", "thread/undo"])
def test_a_stale_if_revision_is_a_revision_conflict(
    d: DaemonProcess, work: Path, method: str
) -> None:
    thread_id = new_thread(d, work)
    run_root(d, thread_id, "true", work)
    stale = step(d, "thread/show", thread_id)["thread"]["revision"] - 1
    error = rpc_error(d, method, {"threadId": thread_id, "ifRevision": stale})
    assert error.name == "THREAD_REVISION_CONFLICT"
    current = step(d, "thread/show", thread_id)["thread"]["revision"]
    assert step(d, method, thread_id, ifRevision=current)["thread"]["revision"] == current + 1


def test_a_closed_thread_refuses_steps(d: DaemonProcess, work: Path) -> None:
    thread_id = new_thread(d, work)
    run_root(d, thread_id, "true", work)
    d.call("thread/close", {"threadId": thread_id})
    for method in ("thread/clear", "thread/undo"):
        assert rpc_error(d, method, {"threadId": thread_id}).name == "THREAD_CLOSED"


def at_once(d: DaemonProcess, calls: dict[str, tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Each call on its own connection, released together; name → result or RpcError."""
    barrier = threading.Barrier(len(calls))
    outcomes: dict[str, Any] = {}

    def one(name: str, method: str, params: dict[str, Any]) -> None:
        with d.client() as client:
            barrier.wait()
            try:
                outcomes[name] = client.call(method, params)
            except RpcError as exc:
                outcomes[name] = exc

    threads = [threading.Thread(target=one, args=(n, *call)) for n, call in calls.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(outcomes) == len(calls)
    return outcomes


def changes_since(d: DaemonProcess, thread_id: str, revision: int) -> list[str]:
    """The thread's writes after `revision`, in order (`thread_revisions`)."""
    with db(d.home) as conn:
        rows = conn.execute(
            "SELECT change FROM thread_revisions WHERE thread_id = ? AND revision > ? "
            "ORDER BY revision",
            (thread_id, revision),
        ).fetchall()
    return [row[0] for row in rows]


@pytest.mark.parametrize("method", ["thread/clear", "thread/undo"])
def test_concurrent_step_and_continue_have_exactly_one_winner(
    d: DaemonProcess, work: Path, method: str
) -> None:
    change = {"thread/clear": "cleared", "thread/undo": "undone"}[method]
    for _ in range(3):
        thread_id = new_thread(d, work)
        run_root(d, thread_id, "true", work)
        revision = step(d, "thread/show", thread_id)["thread"]["revision"]
        base = {"threadId": thread_id, "ifRevision": revision}
        launch = {"runtime": "command", "headless": True, "args": ["true"], "cwd": str(work)}
        outcomes = at_once(
            d, {"step": (method, base), "continue": ("thread/continue", {**base, **launch})}
        )
        errors = [v for v in outcomes.values() if isinstance(v, RpcError)]
        assert [e.name for e in errors] == ["THREAD_REVISION_CONFLICT"], outcomes
        if isinstance(outcomes["step"], RpcError):
            settled(d, outcomes["continue"]["execution"]["id"])
            # the winner's write is revision + 1; the loser wrote nothing
            assert changes_since(d, thread_id, revision) == ["continued", "settled"]
        else:
            assert changes_since(d, thread_id, revision) == [change]


def test_concurrent_clear_and_undo_without_if_revision_both_land_in_order(
    d: DaemonProcess, work: Path
) -> None:
    thread_id = new_thread(d, work)
    run_root(d, thread_id, pin_script(("decision", "kept or not")), work)
    revision = step(d, "thread/show", thread_id)["thread"]["revision"]
    base = {"threadId": thread_id}
    outcomes = at_once(d, {"clear": ("thread/clear", base), "undo": ("thread/undo", base)})
    changes = changes_since(d, thread_id, revision)
    if isinstance(outcomes["undo"], RpcError):
        # the clear went first: nothing since it to undo
        assert outcomes["undo"].name == "THREAD_NOTHING_TO_UNDO"
        assert changes == ["cleared"]
    else:
        assert changes == ["undone", "cleared"]
    assert decisions(d, thread_id) == []


def test_history_is_labelled_kept_searchable_and_a_recap_reads_only_unlabelled_entries(
    d: DaemonProcess, work: Path
) -> None:
    thread_id = new_thread(d, work, "labels")
    words = {"cleared": "aardvarkish", "kept": "bisonesque", "undone": "cheetahlike"}
    first = run_root(d, thread_id, "true", work)
    step(d, "thread/clear", thread_id)
    kept = run_root(d, thread_id, "true", work)
    last = run_root(d, thread_id, "true", work)
    assert step(d, "thread/undo", thread_id)["step"]["executionId"] == last["id"]
    for root, word in zip((first, kept, last), words.values(), strict=True):
        give_history(d, thread_id, root["id"], word, work)

    def labels(word: str) -> list[list[str]]:
        hits = d.call("history/search", {"query": word, "threadId": thread_id})
        assert isinstance(hits, dict)
        return [hit.get("labels", []) for hit in hits["hits"] if hit["source"] == "entry"]

    assert labels(words["cleared"]) == [["before-clear"]] * 2
    assert labels(words["kept"]) == [[]] * 2
    assert labels(words["undone"]) == [["undone"]] * 2
    printed = d.cli("search", words["undone"])
    assert printed.returncode == 0 and "[undone]" in printed.stdout
    assert "[before-clear]" in d.cli("search", words["cleared"]).stdout
    as_json = json.loads(d.cli("search", "--json", words["cleared"]).stdout)
    assert as_json["hits"][0]["labels"] == ["before-clear"]

    async def readable() -> list[str]:
        store = await Store.open(d.home / "alp.db")
        try:
            entries = await recap_entries(store, thread_id)
            newest = await recap_entries(store, thread_id, newest=True, limit=1)
        finally:
            await store.close()
        assert [e.id for e in newest] == [entries[-1].id]
        return [entry.text or "" for entry in entries]

    texts = anyio.run(readable)
    assert texts == [words["kept"], f"noted: {words['kept']}"]


def test_show_lists_the_steps_and_subscribers_hear_of_them(d: DaemonProcess, work: Path) -> None:
    thread_id = new_thread(d, work)
    root = run_root(d, thread_id, "true", work)
    with d.client() as listener:
        listener.call("events/subscribe", {"events": ["thread/changed"], "threadId": thread_id})
        step(d, "thread/undo", thread_id)
        step(d, "thread/clear", thread_id)
        heard = listener.notifications()
        changes = [next(heard)["params"]["change"] for _ in range(2)]
    assert changes == ["undone", "cleared"]
    shown = step(d, "thread/show", thread_id)
    assert [(s["kind"], s.get("executionId")) for s in shown["steps"]] == [
        ("undo", root["id"]),
        ("clear", None),
    ]
    text = d.cli("thread", "show", thread_id).stdout
    assert "undo of root #1" in text and "clear" in text


def test_cli_clear_and_undo_print_what_they_did_and_name_their_errors(
    d: DaemonProcess, work: Path
) -> None:
    thread_id = new_thread(d, work)
    root = run_root(d, thread_id, pin_script(("decision", "keep")), work)
    undone = d.cli("thread", "undo", thread_id)
    assert undone.returncode == 0, undone.stderr
    assert f"undid {root['id']}" in undone.stdout
    assert "context revision 2 is revision 0 again" in undone.stdout
    assert f"alp thread context {thread_id} --rev 1" in undone.stdout
    cleared = d.cli("thread", "clear", thread_id, "--json")
    assert cleared.returncode == 0, cleared.stderr
    assert json.loads(cleared.stdout)["step"] == {
        **json.loads(cleared.stdout)["step"],
        "kind": "clear",
        "revision": 3,
        "replacedRevision": 2,
    }
    nothing = d.cli("thread", "undo", thread_id)
    assert nothing.returncode == 1
    assert "THREAD_NOTHING_TO_UNDO" in nothing.stderr and "--rev" in nothing.stderr
    stale = d.cli("thread", "clear", thread_id, "--if-revision", "1", "--json")
    assert stale.returncode == 1
    assert json.loads(stale.stdout)["error"]["name"] == "THREAD_REVISION_CONFLICT"
