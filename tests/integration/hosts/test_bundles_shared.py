"""Bundles between two real alpd on ONE database (issue 24; docs/many-machines.md), on both
backends (`hosts`: one SQLite file, or one PostgreSQL database): a thread exported on host A
(`alp thread export`) and imported on host B is already there — nothing changed, nothing
written twice, no id taken twice, and the CLI says so; a bundle made on a host with its own
SQLite file, imported into the shared database, is the same thread on both hosts, and each
host continues it on the context the other left."""

from __future__ import annotations

import json
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from daemons import starter
from store_access import raw_db

from alpd.testing.daemon import DaemonProcess

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "threads"))
from test_clear_undo import give_history
from test_thread_invariants import context, new_thread, pin_script, run_root

pytestmark = pytest.mark.both_stores

#: the tables a bundle writes, and the column naming the thread each row is of
THREAD_ROWS = {
    "threads": "id",
    "thread_revisions": "thread_id",
    "snapshots": "thread_id",
    "executions": "thread_id",
}


def rows_of(d: DaemonProcess, thread_id: str) -> dict[str, int]:
    """How many rows of each table a bundle writes belong to the thread, and how many
    history entries its executions have."""
    with raw_db(d) as db:
        counts = {
            table: int(
                db.execute(
                    f"SELECT count(*) FROM {table} WHERE {column} = ?", (thread_id,)
                ).fetchone()[0]
            )
            for table, column in THREAD_ROWS.items()
        }
        counts["history_entries"] = int(
            db.execute(
                "SELECT count(*) FROM history_entries h JOIN executions e "
                "ON e.id = h.execution_id WHERE e.thread_id = ?",
                (thread_id,),
            ).fetchone()[0]
        )
    return counts


def made_with_history(d: DaemonProcess, base: Path, title: str) -> str:
    """A thread on `d`: a root pinning an objective, history, a second pinning a decision."""
    work = base / "work"
    work.mkdir(parents=True, exist_ok=True)
    thread_id = new_thread(d, work, title=title)
    first = run_root(d, thread_id, pin_script(("objective", "ship the parser")), work)
    give_history(d, thread_id, first["id"], "the parser reads TOML", base)
    run_root(d, thread_id, pin_script(("decision", "use tomllib")), work)
    return thread_id


def export(d: DaemonProcess, thread_id: str, path: Path) -> Path:
    done = d.cli("thread", "export", thread_id, "-o", str(path), "--json")
    assert done.returncode == 0, done.stderr
    return path


def imported(d: DaemonProcess, bundle: Path) -> dict[str, Any]:
    done = d.cli("thread", "import", str(bundle), "--json")
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_a_bundle_exported_on_a_imports_on_b_as_nothing_changed(
    hosts: tuple[DaemonProcess, DaemonProcess], tmp_path: Path
) -> None:
    a, b = hosts
    thread_id = made_with_history(a, tmp_path, "bundle me")
    bundle = export(a, thread_id, tmp_path / "thread.alp.gz")
    before = rows_of(a, thread_id)
    shown = a.call("thread/show", {"threadId": thread_id})

    result = imported(b, bundle)
    assert result["imported"] is False and result["thread"]["id"] == thread_id
    done = b.cli("thread", "import", str(bundle))
    assert done.returncode == 0 and "nothing changed" in done.stdout, done.stdout
    # nothing written twice, no id taken twice: the same rows, one thread of that title
    assert rows_of(a, thread_id) == rows_of(b, thread_id) == before
    assert before["history_entries"] >= 2 and before["executions"] == 2
    for d in (a, b):
        threads = d.call("thread/list", {"all": True})["threads"]
        assert [t["id"] for t in threads if t["title"] == "bundle me"] == [thread_id]
        assert d.call("thread/show", {"threadId": thread_id}) == shown


def test_a_bundle_from_a_sqlite_host_continues_from_both_hosts_on_one_context(
    hosts: tuple[DaemonProcess, DaemonProcess], tmp_path: Path
) -> None:
    a, b = hosts
    with ExitStack() as stack:
        (tmp_path / "laptop").mkdir()
        laptop = starter(tmp_path / "laptop", stack)()
        assert "ALP_STORE_URL" not in laptop.env
        thread_id = made_with_history(laptop, tmp_path / "laptop-work", "from the laptop")
        bundle = export(laptop, thread_id, tmp_path / "laptop.alp.gz")
        on_laptop = context(laptop, thread_id)

    first, again = imported(a, bundle), imported(b, bundle)
    assert (first["imported"], again["imported"]) == (True, False)
    assert first["thread"]["id"] == again["thread"]["id"] == thread_id
    assert rows_of(a, thread_id) == rows_of(b, thread_id)
    for d in (a, b):
        here = context(d, thread_id)
        assert (here["digest"], here["revision"]) == (on_laptop["digest"], on_laptop["revision"])
        items = d.call("thread/transcript", {"threadId": thread_id})["items"]
        assert any("the parser reads TOML" in json.dumps(item) for item in items)

    # A continues it on the laptop's context; B then on the context A's root left
    work = tmp_path / "work"
    work.mkdir()
    script = 'cat "$ALP_SESSION_CONTEXT" > seen-$ALP_EXECUTION_ID.md && ' + pin_script(
        ("decision", "continued on the shared database")
    )
    on_a = run_root(a, thread_id, script, work)
    assert on_a["policy"]["binding"]["contextDigest"] == on_laptop["digest"]
    assert "use tomllib" in (work / f"seen-{on_a['id']}.md").read_text()
    after_a = context(a, thread_id)
    assert context(b, thread_id) == after_a
    assert after_a["revision"] == on_laptop["revision"] + 1
    on_b = run_root(b, thread_id, 'cat "$ALP_SESSION_CONTEXT" > seen-$ALP_EXECUTION_ID.md', work)
    assert on_b["policy"]["binding"]["contextDigest"] == after_a["digest"]
    seen = (work / f"seen-{on_b['id']}.md").read_text()
    assert "use tomllib" in seen and "continued on the shared database" in seen
    roots = [r["id"] for r in a.call("thread/show", {"threadId": thread_id})["roots"]]
    assert roots[-2:] == [on_a["id"], on_b["id"]]
    assert roots == [r["id"] for r in b.call("thread/show", {"threadId": thread_id})["roots"]]
