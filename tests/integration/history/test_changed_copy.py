"""Importing a changed copy of a session alp already holds: the importer does not trust the
stored offset when the bytes before it are no longer the ones it read (a digest of what was
read is kept with the cursor and checked before resuming). The file is then read again from
its start — entries are keyed by native ids, so what is already stored is not stored twice —
and the completeness level is the new copy's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from transcripts import Claude, entry_counts

from alpd.testing.daemon import DaemonProcess


def import_dir(d: DaemonProcess, path: Path) -> dict[str, Any]:
    result = d.call("history/import", {"runtime": "claude", "path": str(path)})
    assert isinstance(result, dict)
    return result


def hits(d: DaemonProcess, query: str) -> int:
    found = d.call("history/search", {"query": query})
    assert isinstance(found, dict)
    return len(found["hits"])


def test_complete_copy_imported_after_a_damaged_one_is_complete(
    alpd: DaemonProcess, tmp_path: Path
) -> None:
    claude = Claude()
    before, middle, after = (
        claude.prompt("before the damage"),
        claude.reply("the middle answer wombat"),
        claude.prompt("after the damage"),
    )
    path = tmp_path / f"{claude.session}.jsonl"
    path.write_bytes(before + middle[: len(middle) // 2] + b"\n" + after)
    first = import_dir(alpd, tmp_path)
    assert (first["sessions"][0]["level"], first["skipped"]) == ("partial", 1)

    path.write_bytes(before + middle + after)  # the complete copy, over the damaged one
    second = import_dir(alpd, tmp_path)

    session = second["sessions"][0]
    assert (session["status"], session["level"], session["skipped"]) == ("updated", "complete", 0)
    assert second["skipped"] == 0
    assert (session["entries"], session["added"]) == (3, 1)
    assert entry_counts(alpd.home)[claude.session] == (3, "complete", 0)
    assert hits(alpd, "wombat") == 1


def test_rewritten_earlier_line_is_read_again(alpd: DaemonProcess, tmp_path: Path) -> None:
    claude = Claude()
    lines = [claude.prompt("first question"), claude.reply("first answer")]
    path = tmp_path / f"{claude.session}.jsonl"
    path.write_bytes(b"".join(lines))
    assert import_dir(alpd, tmp_path)["imported"] == 1
    # An earlier line rewritten (same length, so only its bytes say it changed), and a turn
    # appended after it.
    rewritten = claude.prompt("first quokkaio")
    assert len(rewritten) == len(lines[0])
    path.write_bytes(rewritten + lines[1] + claude.prompt("second question"))

    again = import_dir(alpd, tmp_path)

    assert (again["updated"], again["added"], again["skipped"]) == (1, 2, 0)
    assert hits(alpd, "quokkaio") == 1
    assert entry_counts(alpd.home)[claude.session] == (4, "complete", 0)


def test_unchanged_copy_resumes_from_its_offset(alpd: DaemonProcess, tmp_path: Path) -> None:
    claude = Claude()
    path = tmp_path / f"{claude.session}.jsonl"
    path.write_bytes(claude.prompt("one") + claude.reply("two"))
    import_dir(alpd, tmp_path)
    with path.open("ab") as f:
        f.write(claude.prompt("three"))

    again = import_dir(alpd, tmp_path)

    assert (again["updated"], again["added"], again["skipped"]) == (1, 1, 0)
    assert entry_counts(alpd.home)[claude.session] == (3, "complete", 0)
