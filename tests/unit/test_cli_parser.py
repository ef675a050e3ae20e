"""The command line's grammar, without a daemon: global options anywhere, suggestions for
mistyped words, help on every command and option, completion scripts and the man page."""

from __future__ import annotations

import argparse
import gettext
import subprocess
import sys
from pathlib import Path

import pytest

import alpctl
from alpctl.cli import main
from alpctl.commands import COMMANDS
from alpctl.commands.completion import SHELLS, script
from alpctl.commands.man import page
from alpctl.parser import build_parser, parse


@pytest.mark.parametrize(
    "argv",
    [
        ["--socket", "/s/alpd.sock", "thread", "list"],
        ["thread", "--socket", "/s/alpd.sock", "list"],
        ["thread", "list", "--socket", "/s/alpd.sock"],
        ["--socket=/s/alpd.sock", "thread", "list"],
    ],
)
def test_the_socket_is_taken_wherever_it_is_given(argv: list[str]) -> None:
    args = parse(argv)
    assert (args.command, args.action, args.socket) == ("thread", "list", "/s/alpd.sock")


@pytest.mark.parametrize(
    "argv", [["--json", "ping"], ["ping", "--json"], ["--json", "thread", "show", "x"]]
)
def test_json_is_taken_before_or_after_the_command(argv: list[str]) -> None:
    assert parse(argv).json is True


def test_help_on_an_unknown_command_suggests_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["help", "serch"]) == 2
    assert "did you mean 'search'?" in capsys.readouterr().err


def test_without_global_options_the_defaults_hold() -> None:
    args = parse(["thread", "list"])
    assert (args.json, args.socket, args.home) == (False, None, None)


def test_a_mistyped_command_is_a_usage_error_with_a_suggestion(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_:
        parse(["thrad", "list"])
    assert exit_.value.code == 2
    assert "did you mean 'thread'?" in capsys.readouterr().err


def test_a_mistyped_action_is_a_usage_error_with_a_suggestion(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_:
        parse(["thread", "lst"])
    assert exit_.value.code == 2
    assert "did you mean 'list'?" in capsys.readouterr().err


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                found += _parsers(child)
    return found


def test_every_command_action_and_option_explains_itself() -> None:
    parser = build_parser()
    undocumented = []
    for sub in _parsers(parser):
        for action in sub._actions:
            if isinstance(action, argparse._SubParsersAction):
                helps = {choice.dest: choice.help for choice in action._choices_actions}
                undocumented += [
                    f"{sub.prog} {name}" for name in action.choices if not helps.get(name)
                ]
            elif not action.help:
                undocumented.append(f"{sub.prog} {action.option_strings or action.dest}")
    assert undocumented == []
    assert set(COMMANDS) <= {choice for p in _parsers(parser)[:1] for choice in _commands(p)}


def _commands(parser: argparse.ArgumentParser) -> list[str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return list(action.choices)
    return []


def test_a_commands_help_lists_its_actions(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["help", "thread"]) == 0
    help_text = capsys.readouterr().out
    for action in ("create", "continue", "list", "show", "context", "close", "archive"):
        assert f"    {action}" in help_text


def test_help_on_an_action_is_its_own_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["help", "thread", "list"]) == 0
    out = capsys.readouterr().out
    assert "usage: alp thread list" in out and "--archived" in out


def test_context_pin_explains_the_text_after_the_double_dash(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        parse(["context", "pin", "--help"])
    out = capsys.readouterr().out
    assert "alp context pin decision -- three tiers" in out
    assert "-- TEXT" in out


@pytest.mark.parametrize("shell", SHELLS)
def test_completion_scripts_know_the_commands_and_actions(shell: str) -> None:
    text = script(shell)
    archived = "-l archived" if shell == "fish" else "--archived"
    title = "-l title" if shell == "fish" else "--title"  # bare `alp`'s own options too
    for word in ("thread", "continue", archived, title, "execution", "logs"):
        assert word in text, (shell, word)


def test_the_man_page_is_generated_from_the_parser() -> None:
    text = page()
    assert text.startswith(".TH")
    for word in ("thread", "continue", "\\-\\-if\\-revision", "completion"):
        assert word in text, word


def test_alpd_has_a_manual_page_too() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "alpd", "man"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(".TH")
    assert "install\\-units" in done.stdout and "\\-\\-socket" in done.stdout


@pytest.mark.parametrize("program", ["alpctl", "alpd"])
def test_version(program: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", program, "--version"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    name = "alpd" if program == "alpd" else "alp"
    assert done.stdout.strip().startswith(f"{name} 0.")


def test_the_client_imports_nothing_of_the_daemon() -> None:
    modules = ", ".join(f"alpctl.commands.{module}" for module, _help in COMMANDS.values())
    code = (
        f"import sys, alpctl.__main__, alpctl.launch, alpctl.runs, {modules}\n"
        "print(sorted(m for m in sys.modules if m == 'alpd' or m.startswith('alpd.')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "argv",
    [
        ["thread", "list", "--all"],
        ["thread", "show", "thr_x"],
        ["thread", "continue", "thr_x", "--agent", "watch", "--headless"],
        ["--json", "thread", "close", "thr_x", "--if-revision", "3"],
    ],
)
def test_a_call_builds_only_its_action_and_parses_as_the_whole_grammar(argv: list[str]) -> None:
    action = next(word for word in argv[argv.index("thread") + 1 :] if not word.startswith("-"))
    branch = _parsers(build_parser(only="thread", action=action))
    assert _commands(branch[1]) == [action]
    parsed = vars(parse(argv))
    parsed.pop("rest")
    assert parsed == vars(build_parser().parse_args(argv))


def test_a_call_looks_up_no_message_catalog(monkeypatch: pytest.MonkeyPatch) -> None:
    """argparse's messages are used as written: gettext's per-message search for catalogs on
    disk is not part of any command line's cost, nor of its errors."""

    def looked_up(*args: object) -> str:
        raise AssertionError(f"a gettext look-up: {args}")

    monkeypatch.setattr(gettext, "dgettext", looked_up)
    assert parse(["thread", "list", "--json"]).action == "list"
    with pytest.raises(SystemExit):
        parse(["thread", "list", "--limit"])


def test_a_call_imports_no_importlib() -> None:
    """`importlib` (with `warnings`) costs every call that imports it: commands are imported
    with `__import__`. (Without `site`: an editable install's finder imports importlib.)"""
    root = Path(alpctl.__file__).resolve().parent.parent
    code = (
        f"import sys\nsys.path.insert(0, {str(root)!r})\n"
        "from alpctl.commands import load\nload('ping'); load('thread')\n"
        "print('importlib' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exit_:
        parse(argv)
    assert exit_.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "usage", "said"),
    [
        (["thread", "show", "--jsn", "x"], "usage: alp thread show",
         "alp thread show: error: unknown option '--jsn'; did you mean '--json'?"),
        (["push", "t", "--frm", "ci"], "usage: alp push THREAD",
         "alp push: error: unknown option '--frm'; did you mean '--from'?"),
        (["search", "--limt", "3", "word"], "usage: alp search",
         "unknown option '--limt'; did you mean '--limit'?"),
        (["--jsn", "thread", "list"], "usage: alp [-h]",
         "alp: error: unknown option '--jsn'; did you mean '--json'?"),
        (["--titel", "x"], "usage: alp [--title T]",
         "alp: error: unknown option '--titel'; did you mean '--title'?"),
    ],
)  # fmt: skip
def test_an_unknown_option_shows_its_subcommands_usage_and_a_close_one(
    argv: list[str], usage: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _usage_error(argv, capsys)
    assert err.startswith(usage), err
    assert said in err


def test_a_mistyped_option_is_named_before_the_required_one_it_meant_to_give(
    capsys: pytest.CaptureFixture[str],
) -> None:
    err = _usage_error(["schedule", "add", "t", "--evry", "1h"], capsys)
    assert "usage: alp schedule add" in err
    assert "unknown option '--evry'; did you mean '--every'?" in err
    assert "required" not in err


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["thread", "continue", "t", "--prompt", "-x"], "argument --prompt: expected one"),
        (["thread", "show", "a", "b"], "alp thread show: error: unrecognized arguments: b"),
        (["thread", "list", "--wat"], "unknown option '--wat'\n"),  # nothing close: no guess
    ],
)
def test_what_is_not_an_unknown_option_keeps_argparses_word(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert said in _usage_error(argv, capsys)


def test_an_abbreviated_option_and_a_negative_value_are_not_unknown() -> None:
    assert parse(["thread", "list", "--arch"]).archived is True
    assert parse(["thread", "diff", "t", "--root", "-1"]).root == -1


def test_alp_help_names_every_action_of_every_command() -> None:
    """`alp help`'s line for a command lists its actions: a newcomer found no `thread log`."""
    import re

    missing = []
    for command in _parsers(build_parser())[0]._actions:
        if not isinstance(command, argparse._SubParsersAction):
            continue
        for name, parser in command.choices.items():
            words = _commands(parser) or [
                str(choice)
                for a in parser._actions
                if a.dest == "action" and a.choices
                for choice in a.choices
            ]
            line = COMMANDS[name][1]
            missing += [f"{name} {w}" for w in words if not re.search(rf"\b{w}\b", line)]
    assert missing == []
