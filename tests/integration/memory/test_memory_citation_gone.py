"""A memory whose thread was deleted keeps its citation as text (alp has no thread delete:
the test deletes the row in the daemon's database), and still reaches a new root."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from daemons import cli_json

from alpd.testing.daemon import DaemonProcess


def test_a_memory_whose_thread_is_deleted_keeps_its_citation_as_text(
    d: DaemonProcess, tmp_path: Path
) -> None:
    ws = tmp_path / "shop"
    (ws / ".git").mkdir(parents=True)
    created = d.call("thread/create", {"title": "pricing", "cwd": str(ws)})
    assert isinstance(created, dict)
    thread = str(created["id"])
    pin = d.cli(
        "thread", "continue", thread, "--json", "--runtime", "command", "--headless", "--wait",
        "--", "sh", "-c", "alp context pin constraint -- 'prices are stored in cents'",
        cwd=str(ws),
    )  # fmt: skip
    assert pin.returncode == 0, pin.stderr
    pinner = json.loads(pin.stdout)["execution"]["id"]
    memory = cli_json(d, "memory", "promote", thread, "1", cwd=ws)
    before = cli_json(d, "memory", "show", memory["id"], cwd=ws)["citation"]
    assert before["threadExists"] is True

    conn = sqlite3.connect(d.home / "alp.db", timeout=10, isolation_level=None)
    try:
        conn.execute("PRAGMA foreign_keys = OFF")
        triggers = "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?"
        for (name,) in conn.execute(triggers, ("threads",)).fetchall():
            conn.execute(f"DROP TRIGGER {name}")
        assert conn.execute("DELETE FROM threads WHERE id = ?", (thread,)).rowcount == 1
    finally:
        conn.close()
    assert d.cli("thread", "show", thread).returncode != 0  # the thread is gone

    shown = cli_json(d, "memory", "show", memory["id"], cwd=ws)
    citation = shown["citation"]
    assert citation.get("threadExists", False) is False and citation["threadId"] == thread
    assert citation["threadTitle"] == "pricing" and citation["contextRevision"] == 1
    assert "lineText" not in citation or citation["lineText"] is None
    text = citation["text"]
    assert "the thread is gone; this citation is all that is left of it" in text
    assert f"pinned by {pinner}" in text and "'pricing'" in text and thread in text
    human = d.cli("memory", "show", memory["id"], cwd=str(ws))
    assert human.returncode == 0 and "the thread is gone" in human.stdout
    assert shown["memory"]["status"] == "active"  # the memory itself stays
    listed = cli_json(d, "memory", "list", cwd=ws)["memories"]
    assert [m["id"] for m in listed] == [memory["id"]]
