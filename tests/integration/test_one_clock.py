"""One clock and one revision (issue 22, point 7) on a real alpd: every time the command
line shows is local, with its zone, in one shape; the revision `thread show` and `thread list`
print is the one `--if-revision` takes; an imported session keeps its own date in
`alp activity` and its cost stays out of the total, which says so."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from daemons import StartAlpd, cli_json
from transcripts import Claude

from alpd.testing.daemon import DaemonProcess

#: `2026-12-02 09:41 CET`: the one shape (here in Berlin, winter and summer)
LOCAL = re.compile(r"\b\d{4}-\d\d-\d\d \d\d:\d\d (CET|CEST)\b")
BERLIN = {"TZ": "Europe/Berlin"}

CONFIG = """
[runtimes.claude]
prices = { "claude-sonnet-test" = { input = 1000.0, output = 1000.0 } }
"""


@pytest.fixture
def d(start_alpd: StartAlpd) -> DaemonProcess:
    return start_alpd(CONFIG)


def test_the_times_a_person_sees_are_local_with_their_zone(d: DaemonProcess, work: Path) -> None:
    thread = cli_json(d, "thread", "create", "--title", "clock", cwd=work)
    shown = d.cli("thread", "show", thread["id"], extra_env=BERLIN)
    created = next(line for line in shown.stdout.splitlines() if "created" in line)
    assert len(LOCAL.findall(created)) == 2, created
    listed = d.cli("thread", "list", cwd=str(work), extra_env=BERLIN)
    assert LOCAL.search(listed.stdout), listed.stdout
    # --json keeps the wire's UTC ISO time
    assert cli_json(d, "thread", "show", thread["id"])["thread"]["createdAt"].endswith("Z")


def test_the_revision_shown_is_the_one_if_revision_takes(d: DaemonProcess, work: Path) -> None:
    thread = cli_json(d, "thread", "create", "--title", "rev", cwd=work)
    ran = d.call("thread/continue", {"threadId": thread["id"], "runtime": "command",
                 "headless": True, "args": ["true"]})  # fmt: skip
    assert isinstance(ran, dict)
    d.call("execution/wait", {"executionId": ran["execution"]["id"], "timeout": 30})
    shown = d.cli("thread", "show", thread["id"]).stdout
    revision = int(re.search(r"   revision (\d+)", shown).group(1))  # type: ignore[union-attr]
    assert re.search(r"context rev \d+", shown)  # the other counter, with its own label
    row = next(line for line in d.cli("thread", "list", cwd=str(work)).stdout.splitlines()
               if line.startswith(thread["id"]))  # fmt: skip
    assert row.split()[2] == str(revision)
    stale = d.cli("thread", "close", thread["id"], "--if-revision", str(revision + 1))
    assert stale.returncode == 1 and "THREAD_REVISION_CONFLICT" in stale.stderr
    assert d.cli("thread", "close", thread["id"], "--if-revision", str(revision)).returncode == 0


def test_an_imported_session_keeps_its_date_and_stays_out_of_the_total(
    d: DaemonProcess, work: Path, tmp_path: Path
) -> None:
    session = Claude(ts="2025-01-05T10:00:00.000Z")
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    (sessions / f"{session.session}.jsonl").write_bytes(
        session.prompt("an old question") + session.reply("an old answer")
    )
    d.call("history/import", {"runtime": "claude", "path": str(sessions)})
    thread = cli_json(d, "thread", "create", "--title", "now", cwd=work)
    ran = d.call("thread/continue", {"threadId": thread["id"], "runtime": "command",
                 "headless": True, "args": ["true"]})  # fmt: skip
    assert isinstance(ran, dict)
    d.call("execution/wait", {"executionId": ran["execution"]["id"], "timeout": 30})
    result = cli_json(d, "activity")
    imported = [item for item in result["items"] if item.get("imported")]
    assert len(imported) == 1 and imported[0]["at"].startswith("2025-01-05T10:00")
    assert imported[0]["createdAt"] > "2026"  # when it was imported: not shown as its date
    assert result["items"][-1] is imported[0]  # ordered by its own date: the oldest
    assert imported[0]["costUsd"] > 0
    assert result["importedCostUsd"] == imported[0]["costUsd"]
    assert result["costUsd"] == pytest.approx(
        sum(i.get("costUsd") or 0 for i in result["items"] if not i.get("imported"))
    )
    human = d.cli("activity", extra_env=BERLIN).stdout.splitlines()
    assert any(line.startswith("2025-01-05 11:00 CET") for line in human), human
    assert "1 imported session(s) at their own dates, not counted" in human[-1]
    # `--since` reads the same moment: a window after the import but after the session
    # leaves the session out
    later = cli_json(d, "activity", "--since", "2025-06-01T00:00:00Z")
    assert not any(item.get("imported") for item in later["items"]), json.dumps(later)
