"""`history/import` of many sessions (written a batch per transaction) gives what importing
them one by one gave: the same executions, entries, levels, cursors, times, links and index.

The directory mixes what takes each path: small new sessions (batched), one bigger than a
read (one by one), a session already imported that grew since (one by one), a session named
twice in two project directories (the second is the first one's, as before), a file with a
corrupt line (partial), and the real fixtures (the Claude fork's copied entries stored once
as pointers; the Codex fork linked to its parent's execution).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from transcripts import CLAUDE_COUNTS, CODEX_COUNTS, CODEX_FORK, FIXTURES, Claude, db, entry_counts

from alpd.services.history.chunks import CHUNK_BYTES
from alpd.testing.daemon import DaemonProcess

SMALL = 40


def import_dir(d: DaemonProcess, runtime: str, path: Path) -> dict[str, Any]:
    result = d.call("history/import", {"runtime": runtime, "path": str(path)})
    assert isinstance(result, dict)
    return result


def small_session(directory: Path, n: int) -> tuple[str, int]:
    """A session of a few turns holding the word `codename{n}`; (session id, entries)."""
    claude = Claude(ts=f"2026-11-{1 + n % 28:02d}T05:00:00.000Z")
    lines = []
    for turn in range(1 + n % 4):
        lines += [
            claude.prompt(f"turn {turn} of codename{n}", ts=f"2026-11-01T05:{turn:02d}:00.000Z"),
            claude.tool_call("Bash", {"command": f"ls {n}"}, f"toolu_{n}_{turn}"),
            claude.tool_result(f"output {n} " * 50, f"toolu_{n}_{turn}"),
            claude.reply(f"reply {turn}", ts=f"2026-11-01T06:{turn:02d}:00.000Z"),
        ]
    (directory / f"{claude.session}.jsonl").write_bytes(b"".join(lines))
    return claude.session, len(lines)


def test_many_sessions_import_as_they_did_one_by_one(alpd: DaemonProcess, tmp_path: Path) -> None:
    root = tmp_path / "projects"
    first, second = root / "-home-dev-a", root / "-home-dev-b"
    first.mkdir(parents=True)
    expected: dict[str, tuple[int, str, int]] = {}
    for n in range(SMALL):
        session, entries = small_session(first, n)
        expected[session] = (entries, "complete", 0)
    smalls = sorted(expected)
    # Imported before, then it grew: its execution is synced from its cursor.
    grown = Claude()
    grown_path = tmp_path / "early" / f"{grown.session}.jsonl"
    grown_path.parent.mkdir()
    grown_path.write_bytes(grown.prompt("early") + grown.reply("first answer"))
    assert import_dir(alpd, "claude", grown_path.parent)["imported"] == 1
    with grown_path.open("ab") as f:
        f.write(grown.prompt("later") + grown.reply("second answer"))
    shutil.copy(grown_path, first)
    expected[grown.session] = (4, "complete", 0)
    # Bigger than one read.
    big = Claude()
    text = "lorem ipsum " * 1000
    with (first / f"{big.session}.jsonl").open("wb") as f:
        for i in range(CHUNK_BYTES // len(text) + 10):
            f.write(big.prompt(f"{i} {text}"))
    expected[big.session] = (CHUNK_BYTES // len(text) + 10, "complete", 0)
    # A corrupt line.
    broken = Claude()
    (first / f"{broken.session}.jsonl").write_bytes(
        broken.prompt("before") + b"{not json\n" + broken.reply("after")
    )
    expected[broken.session] = (2, "partial", 1)
    # The same session id in a second project directory: imported once, from the first file.
    second.mkdir()
    # (a small one: `grown`'s cursor names the file it was first imported from)
    twin = first / f"{smalls[0]}.jsonl"
    shutil.copy(twin, second / twin.name)
    shutil.copytree(FIXTURES / "claude", root / "-home-dev-project")
    expected.update({s: (count, "complete", 0) for s, count in CLAUDE_COUNTS.items()})

    result = import_dir(alpd, "claude", root)

    files = SMALL + 4 + len(CLAUDE_COUNTS)
    assert (result["files"], result["imported"], result["updated"]) == (files, files - 2, 2)
    assert result["skipped"] == 1
    assert entry_counts(alpd.home) == expected
    listed = {(s["nativeSessionId"], s["entries"], s["level"]) for s in result["sessions"]}
    assert listed == {(s, e, level) for s, (e, level, _) in expected.items()}
    assert result["added"] == sum(e for e, _, _ in expected.values()) - 2  # grown's first two
    with db(alpd.home) as conn:
        cursors = {
            r["session_id"]: (r["consumed"], r["path"])
            for r in conn.execute("SELECT session_id, consumed, path FROM history_cursors")
        }
        times = conn.execute(
            "SELECT count(*) FROM executions e WHERE started_at IS NOT (SELECT min(ts) FROM "
            "history_entries WHERE execution_id = e.id) OR settled_at IS NOT (SELECT max(ts) "
            "FROM history_entries WHERE execution_id = e.id)"
        ).fetchone()[0]
        copies = conn.execute(
            "SELECT count(*) FROM history_entries WHERE copy_of IS NOT NULL"
        ).fetchone()[0]
    for session, (consumed, path) in cursors.items():
        assert consumed == Path(path).stat().st_size, session
    assert cursors[twin.stem][1] == str(twin)
    assert times == 0
    assert copies == 7
    for n in range(SMALL):
        found = alpd.call("history/search", {"query": f"codename{n}"})
        assert isinstance(found, dict)
        assert len({hit["executionId"] for hit in found["hits"]}) == 1, n

    again = import_dir(alpd, "claude", root)
    assert (again["imported"], again["updated"], again["added"]) == (0, files, 0)
    assert entry_counts(alpd.home) == expected


def test_codex_fork_imported_with_its_parent_links_to_it(alpd: DaemonProcess) -> None:
    import_dir(alpd, "codex", FIXTURES / "codex")
    with db(alpd.home) as conn:
        link = conn.execute(
            "SELECT p.native_session_id, c.link_kind FROM history_cursors c "
            "JOIN executions p ON p.id = c.links_to WHERE c.session_id = ?",
            (CODEX_FORK,),
        ).fetchone()
    assert link is not None
    assert link["link_kind"] == "fork"
    assert link["native_session_id"] in CODEX_COUNTS
    assert link["native_session_id"] != CODEX_FORK
