"""pytest imports test modules by their base name (rootdir-relative, no packages): two test
files of one name anywhere under tests/ stop the whole collection, so every name is unique."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_no_two_test_files_share_a_name() -> None:
    names = Counter(path.name for path in TESTS.rglob("test_*.py"))
    assert [name for name, count in names.items() if count > 1] == []
