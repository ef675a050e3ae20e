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


def _listed(
    as_json: bool, quiet: bool, items: list[dict[str, Any]], limit: int, most: int,
    capsys: pytest.CaptureFixture[str],
) -> tuple[str, str]:  # fmt: skip
    from alpctl.command_line import Arguments
    from alpctl.lists import emit_list

    result = {"threads": items}
    emit_list(Output(as_json), Arguments(quiet=quiet), result, items,
              lambda r: f"{len(r['threads'])} rows", limit=limit, most=most)  # fmt: skip
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_a_quiet_list_is_its_ids_and_json_wins_over_it(capsys: pytest.CaptureFixture[str]) -> None:
    items = [{"id": "thread_a"}, {"id": "thread_b"}]
    assert _listed(False, True, items, 2, 10, capsys) == ("thread_a\nthread_b\n", "")
    assert _listed(False, True, [], 2, 10, capsys) == ("", "")
    out, err = _listed(True, True, items, 2, 10, capsys)
    assert json.loads(out) == {"threads": items} and err == ""


@given(st.integers(1, 50), st.integers(0, 60), st.integers(1, 100))
def test_a_list_at_its_limit_says_so_on_stderr(limit: int, count: int, most: int) -> None:
    import contextlib
    import io

    from alpctl.command_line import Arguments
    from alpctl.lists import emit_list

    out, err = io.StringIO(), io.StringIO()
    items = [{"id": str(i)} for i in range(count)]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        emit_list(Output(False), Arguments(quiet=False), {}, items, lambda r: "the list",
                  limit=limit, most=max(most, limit))  # fmt: skip
    assert out.getvalue() == "the list\n"
    if count < limit:
        assert err.getvalue() == ""
    elif limit < max(most, limit):
        assert f"`--limit {min(limit * 2, most)}` shows more" in err.getvalue()
    else:
        assert "a narrower filter shows more" in err.getvalue()
