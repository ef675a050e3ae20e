"""`--json` output: one compact document on one line, written to stdout in one piece."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alpctl.invocation import Output

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


class Recorder:
    """A stdout that keeps each write apart (as an unbuffered one sends each to the kernel)."""

    def __init__(self) -> None:
        self.writes: list[str] = []

    def write(self, text: str) -> int:
        self.writes.append(text)
        return len(text)

    def isatty(self) -> bool:
        return False


@given(JSON)
def test_a_document_is_one_write_of_one_compact_line(document: Any) -> None:
    stdout = Recorder()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("sys.stdout", stdout)
        Output(as_json=True).json(document)
    (written,) = stdout.writes
    assert written == json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"
    assert json.loads(written) == document


def test_many_threads_are_still_one_write(monkeypatch: pytest.MonkeyPatch) -> None:
    """`json.dump` would have written each of the ~770 tokens of 20 threads on its own."""
    stdout = Recorder()
    monkeypatch.setattr("sys.stdout", stdout)
    threads = [{"id": f"thread_{n}", "title": f"é {n}", "revision": n} for n in range(20)]
    Output(as_json=True).emit({"threads": threads}, "unused for --json")
    assert len(stdout.writes) == 1
    assert "é" in stdout.writes[0]
