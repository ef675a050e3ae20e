"""Plain command lines are read without argparse, to the same `Arguments` argparse gives;
everything else (help, errors, abbreviations, typed values) is argparse's to read."""

from __future__ import annotations

import argparse

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from alpctl import parser as with_argparse
from alpctl.command_line import parse, quick_parse
from alpctl.commands import COMMANDS
from alpctl.commands.thread import ACTIONS


def argparse_reads(argv: list[str]) -> dict[str, object]:
    try:
        return vars(with_argparse.parse(argv))
    except SystemExit as exc:
        pytest.fail(f"argparse refuses {argv} (exit {exc.code}), the quick reading took it")


@pytest.mark.parametrize(
    "argv",
    [
        ["ping", "--json"],
        ["--json", "ping"],
        ["thread", "list", "--json"],
        ["thread", "list", "--status", "open", "--all"],
        ["thread", "list", "--status=closed", "--socket", "/s/alpd.sock"],
        ["search", "two", "words", "--json", "--limit", "5"],
        ["search", "--role", "user", "word"],
        ["thread", "show"],
        ["thread", "show", "thr_1", "--socket", "/s/alpd.sock"],
        ["thread", "close", "thr_1", "--if-revision", "3", "--json"],
        ["thread", "continue", "thr_1", "--agent", "a", "-f", "--", "--runtime-arg"],
        ["--socket=/s/alpd.sock", "--home", "/h", "status"],
        ["help"],
        ["help", "thread", "list"],
        ["completion", "bash"],
    ],
)
def test_a_plain_line_is_read_without_argparse_as_argparse_reads_it(argv: list[str]) -> None:
    quick = quick_parse(argv)
    assert quick is not None
    assert vars(quick) == argparse_reads(argv)


@pytest.mark.parametrize(
    "argv",
    [
        [],  # bare `alp`: a new thread
        ["--title", "t"],
        ["-h"],
        ["--version"],
        ["thread", "list", "--help"],
        ["thread"],
        ["thread", "lst"],  # argparse suggests 'list'
        ["thrad", "list"],
        ["thread", "list", "--arch"],  # argparse takes the abbreviation of --archived
        ["thread", "list", "--status", "opne"],
        ["thread", "list", "--status"],
        ["thread", "list", "--status", "-x"],
        ["thread", "list", "--json=yes"],
        ["thread", "close", "thr_1", "--if-revision", "three"],
        ["thread", "show", "a", "b"],
        ["thread", "--json", "list"],
        ["search"],
        ["search", "a", "--json", "b"],  # argparse leaves 'b' over
        ["search", "word", "--since", "7d"],  # a time: argparse converts it
        ["search", "-5"],
        ["daemon", "ping"],  # sub-actions of its own
        ["schedule", "list"],
        ["push", "thr_1"],  # `--from` takes a keyword the quick reading does not know
    ],
)
def test_anything_else_is_left_to_argparse(argv: list[str]) -> None:
    assert quick_parse(argv) is None


def _flags() -> list[str]:
    """Every option string of the whole grammar, and a few that are not."""
    found = {"--arch", "--json=1", "--limit=3", "--status=open", "-x", "-5", "-"}
    parsers = [with_argparse.build_parser(describe=True)]
    while parsers:
        parser = parsers.pop()
        for action in parser._actions:
            found.update(action.option_strings)
            if isinstance(action, argparse._SubParsersAction):
                parsers += action.choices.values()
    return sorted(found)


WORDS = [*COMMANDS, *ACTIONS, "thr_1", "open", "closed", "user", "3", "x", "", "--"]
TOKENS = st.sampled_from(_flags() + WORDS)


@settings(max_examples=500)
@given(
    st.sampled_from([[], *([name] for name in COMMANDS)]),
    st.sampled_from([[], *([name] for name in ACTIONS)]),
    st.lists(TOKENS, max_size=6),
)
@example(["thread"], ["list"], ["--json"])
@example(["search"], [], ["x", "--limit", "3", "--role", "user"])
@example(["search"], [], ["a", "--json", "b"])
@example(["thread"], ["show"], ["--json", "a", "--json", "b"])
def test_whatever_the_quick_reading_takes_argparse_reads_the_same(
    command: list[str], action: list[str], rest: list[str]
) -> None:
    argv = command + action + rest
    quick = quick_parse(argv)
    if quick is not None:
        assert vars(quick) == argparse_reads(argv)


def test_a_time_is_read_by_argparse_with_alps_message(capsys: pytest.CaptureFixture[str]) -> None:
    assert parse(["search", "word", "--since", "7d"]).since.endswith("Z")
    with pytest.raises(SystemExit) as exit_:
        parse(["search", "word", "--since", "yesterday"])
    assert exit_.value.code == 2
    assert "'yesterday' is not a time: use 2026-11-30, an ISO time or 7d" in capsys.readouterr().err
