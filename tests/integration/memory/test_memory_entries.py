"""A memory cites the history entries it came from (docs/memory.md): `alp memory add --entry
ID` (a search hit's entryId) checks each is there and the writer's, the versions record them,
and `alp memory show` reads them back as they are now — one gone since is shown as its id."""

from __future__ import annotations

import json
from pathlib import Path

from daemons import cli_json
from transcripts import Claude, write_db

from alpd.testing.daemon import DaemonProcess

DECISION = "we settled on storing prices in cents, never floats"


def imported_entry(d: DaemonProcess, base: Path) -> int:
    """A Claude session imported into history; the id of the reply holding DECISION, found
    the way a person finds it: by searching."""
    sessions = base / "sessions"
    sessions.mkdir()
    claude = Claude()
    (sessions / f"{claude.session}.jsonl").write_bytes(
        claude.prompt("how do we store prices?") + claude.reply(DECISION)
    )
    d.call("history/import", {"runtime": "claude", "path": str(sessions)})
    hits = cli_json(d, "search", "prices cents", "--mode", "keyword")["hits"]
    assert hits and hits[0]["role"] == "assistant"
    human = d.cli("search", "prices cents", "--mode", "keyword").stdout
    assert f"entry {hits[0]['entryId']}" in human
    return int(hits[0]["entryId"])


def test_a_memory_cites_history_entries_and_show_reads_them_back(
    d: DaemonProcess, tmp_path: Path
) -> None:
    entry = imported_entry(d, tmp_path)
    done = d.cli("memory", "add", "--entry", str(entry), "--json", "--", "prices are in cents")
    assert done.returncode == 0, done.stderr
    memory = json.loads(done.stdout)
    shown = cli_json(d, "memory", "show", memory["id"])
    assert shown["versions"][0]["provenance"]["historyEntryIds"] == [entry]
    (cited,) = shown["citation"]["entries"]
    assert (cited["id"], cited["exists"], cited["role"]) == (entry, True, "assistant")
    assert cited["excerpt"] == DECISION and cited["executionId"]
    assert f"from history entries {entry}" in shown["citation"]["text"]
    human = d.cli("memory", "show", memory["id"]).stdout
    assert f"entry {entry}: assistant" in human and DECISION in human
    # the entry gone (as when its thread is deleted): the citation keeps its id
    with write_db(d.home) as conn:
        conn.execute("PRAGMA foreign_keys = OFF")
        triggers = "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?"
        for (name,) in conn.execute(triggers, ("history_entries",)).fetchall():
            conn.execute(f"DROP TRIGGER {name}")
        conn.execute("DELETE FROM history_entries WHERE id = ?", (entry,))
    gone = cli_json(d, "memory", "show", memory["id"])["citation"]["entries"]
    assert gone == [{"id": entry, "exists": False}]
    assert f"entry {entry}: gone" in d.cli("memory", "show", memory["id"]).stdout


def test_an_entry_that_is_not_there_is_not_cited(d: DaemonProcess, tmp_path: Path) -> None:
    entry = imported_entry(d, tmp_path)
    refused = d.cli("memory", "add", "--entry", str(entry), "--entry", "99999999", "--", "x y")
    assert refused.returncode != 0
    assert "HISTORY_ENTRY_NOT_FOUND" in refused.stderr and "99999999" in refused.stderr
    assert cli_json(d, "memory", "list")["memories"] == []
