"""The digest a history cursor keeps of what it read (`prefix_digest`): what it notices."""

from __future__ import annotations

from pathlib import Path

from alpd.services.history.chunks import PREFIX_WINDOW, prefix_digest_of


def test_an_appended_file_keeps_the_digest_of_what_was_read(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"a" * (3 * PREFIX_WINDOW))
    before = prefix_digest_of(str(path), 3 * PREFIX_WINDOW)
    with path.open("ab") as f:
        f.write(b"more\n")
    assert prefix_digest_of(str(path), 3 * PREFIX_WINDOW) == before


def test_an_edit_that_changes_the_length_is_seen_far_from_both_ends(tmp_path: Path) -> None:
    lines = [b"line %06d\n" % i for i in range(PREFIX_WINDOW // 2)]  # 5.5 windows
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(lines))
    consumed = path.stat().st_size
    before = prefix_digest_of(str(path), consumed)
    lines[len(lines) // 2] = b"line 0\n"  # in the middle, outside both windows
    path.write_bytes(b"".join(lines) + b"x" * 5)  # the same size again
    assert prefix_digest_of(str(path), consumed) != before


def test_a_small_file_is_digested_whole(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    data = bytearray(b"b" * (2 * PREFIX_WINDOW))
    path.write_bytes(data)
    before = prefix_digest_of(str(path), len(data))
    data[PREFIX_WINDOW] = ord("c")  # same length, in the middle
    path.write_bytes(data)
    assert prefix_digest_of(str(path), len(data)) != before
