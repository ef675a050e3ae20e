"""Help keeps the lines it was written with: an epilog's examples no longer run together,
and only a line longer than the width is wrapped."""

from __future__ import annotations

import pytest

from alpctl.commands import inbox
from alpctl.parser import build_parser


def test_an_epilog_keeps_its_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    shown = _help("inbox")
    for line in inbox._EPILOG.splitlines():
        assert line in shown.splitlines(), line


def test_a_long_line_is_still_wrapped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    assert all(len(line) <= 40 for line in build_parser().format_help().splitlines()
               if not line.startswith(" "))  # fmt: skip


def _help(command: str) -> str:
    parser = build_parser(only=command)
    (sub,) = (a for a in parser._actions if a.dest == "command")
    return str(sub.choices[command].format_help())  # type: ignore[attr-defined]
