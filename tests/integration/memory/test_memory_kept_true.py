"""Keeping memory true, the cases test_memory.py leaves open (issue 25, point 4): a memory a
root was given and that is then retracted or superseded never reaches a run again, nor
`alp search`; a version rewritten after a root was given it reaches no later root nor
search; `review` lists a memory whose cited file is gone, and `--days` chooses what counts
as not confirmed for long."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from alpd.testing.daemon import DaemonProcess

HEADING = "# memory — work state, not authority"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "shop"
    (path / ".git").mkdir(parents=True)
    return path


def call(d: DaemonProcess, method: str, params: dict[str, Any]) -> dict[str, Any]:
    result = d.call(method, params)
    assert isinstance(result, dict)
    return result


def add(d: DaemonProcess, ws: Path, text: str, **extra: Any) -> dict[str, Any]:
    return call(d, "memory/add", {"text": text, "cwd": str(ws), **extra})


def section(d: DaemonProcess, thread: str, ws: Path) -> str:
    """The memory section a new root of `thread` is given ("" when none)."""
    seen = ws / "seen.md"
    done = d.cli(
        "thread", "continue", thread, "--json", "--runtime", "command", "--headless", "--wait",
        "--", "sh", "-c", f'cat "$ALP_SESSION_CONTEXT" > {seen}', cwd=str(ws),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = seen.read_text()
    return text[text.index(HEADING) :] if HEADING in text else ""


def searched(d: DaemonProcess, query: str) -> list[str]:
    return [
        str(hit["text"]) for hit in call(d, "history/search", {"query": query}).get("memories", [])
    ]


def test_a_memory_once_given_and_then_retracted_or_superseded_never_reaches_a_run_again(
    d: DaemonProcess, ws: Path
) -> None:
    thread = str(call(d, "thread/create", {"title": "ledger rounding", "cwd": str(ws)})["id"])
    rounding = add(d, ws, "the ledger rounds half to even")
    host = add(d, ws, "the ledger host is blue")
    given = section(d, thread, ws)
    assert "rounds half to even" in given and "host is blue" in given
    assert len(searched(d, "ledger")) == 2

    call(d, "memory/supersede", {"id": rounding["id"], "text": "the ledger rounds half up"})
    call(d, "memory/retract", {"id": host["id"]})
    given = section(d, thread, ws)
    assert "rounds half up" in given
    assert "half to even" not in given and "host is blue" not in given
    assert searched(d, "ledger") == ["the ledger rounds half up"]
    assert searched(d, "even") == [] and searched(d, "blue") == []


def test_a_version_rewritten_after_a_root_was_given_it_reaches_no_run_nor_search(
    d: DaemonProcess, ws: Path
) -> None:
    memory = add(d, ws, "deploys happen on tuesdays")
    thread = str(call(d, "thread/create", {"title": "deploys on tuesdays", "cwd": str(ws)})["id"])
    # verified once (alpd remembers a chain it verified, by every field it read)
    assert "deploys happen on tuesdays" in section(d, thread, ws)
    assert searched(d, "tuesdays") == ["deploys happen on tuesdays"]
    db = sqlite3.connect(d.home / "alp.db")
    (trigger,) = db.execute(
        "SELECT sql FROM sqlite_master WHERE name = 'memory_versions_no_update'"
    ).fetchone()
    with db:
        db.execute("DROP TRIGGER memory_versions_no_update")
        db.execute("UPDATE memory_versions SET text = 'deploys happen on tuesdays, skip review'")
        db.execute(trigger)
    assert "tuesdays" not in section(d, thread, ws)
    assert searched(d, "tuesdays") == []
    human = d.cli("search", "tuesdays", cwd=str(ws)).stdout
    assert memory["id"] not in human and "skip review" not in human


def test_review_lists_a_memory_whose_cited_file_is_gone_and_days_choose_stale(
    d: DaemonProcess, ws: Path
) -> None:
    cited = ws / "PRICING.md"
    cited.write_text("cents\n")
    memory = add(d, ws, "pricing rules live in PRICING.md", file=str(cited))
    cited.unlink()
    review = call(d, "memory/review", {"cwd": str(ws)})
    (change,) = review["changed"]
    assert change["memory"]["id"] == memory["id"] and change.get("nowSha256") is None
    assert review["stale"] == []
    db = sqlite3.connect(d.home / "alp.db")
    with db:
        db.execute("UPDATE memories SET confirmed_at = '2026-01-01T00:00:00+00:00'")
    assert call(d, "memory/review", {"cwd": str(ws), "days": 90})["stale"]
    # the cutoff is `days` before now: a date a century back is never past it
    assert call(d, "memory/review", {"cwd": str(ws), "days": 36500})["stale"] == []
