"""The command line's grammar as argparse parsers: help, completion, the man page, every usage
error, and the command lines `alpctl.command_line` does not read itself. Global options are
accepted anywhere and a mistyped word gets a close-match suggestion.

Every argparse parser costs a help formatter per argument, so a parse builds the branch it
parses: the command's, and of a command that declares its `ACTIONS`, only the invoked
action's (`alp thread list` builds three parsers, not eleven: ~4 ms).
`--help`, `alp help`, completion, man pages and a mistyped action build everything.
Commands are registered in `alpctl.commands.COMMANDS`; each command module describes its own
arguments.

argparse translates each of its messages through `gettext.gettext`, which looks for a message
catalog on disk at every call (locale normalisation and a stat per candidate language: 6 to 9
calls, ~0.1 ms each, on every command line). alp's text is English and Python ships no
argparse catalogs, so argparse's messages are used as written (`_untranslated`).
"""

from __future__ import annotations

import argparse
import os
import sys

from alpctl.command_line import (
    GLOBAL_OPTIONS,
    Arguments,
    command_words,
    runtime_options,
    split_runtime_args,
)
from alpctl.commands import COMMANDS, load

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

EXIT_USAGE = 2


def _untranslated(message: str) -> str:
    return message


setattr(argparse, "_", _untranslated)  # noqa: B010 (argparse's private name for gettext)


class Formatter(argparse.HelpFormatter):
    """argparse asks `shutil.get_terminal_size` for every argument it adds (importing shutil,
    bz2, lzma… on every call); the help's width comes from $COLUMNS instead.

    A description or epilog keeps its lines (argparse's default joins them, so the examples
    of an epilog ran together): a line that fits, or an indented one (an example, a command),
    is printed as written; only a line longer than the width is wrapped."""

    def __init__(self, prog: str) -> None:
        columns = os.environ.get("COLUMNS", "")
        super().__init__(prog, width=int(columns) - 2 if columns.isdigit() else 98)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import textwrap  # argparse imports it already

        lines = []
        for line in text.splitlines():
            if len(indent + line) <= width or line.startswith(" "):
                lines.append(indent + line if line else "")
            else:
                lines.append(textwrap.fill(line, width, initial_indent=indent,
                                           subsequent_indent=indent))  # fmt: skip
        return "\n".join(lines)


def suggestion(word: str, choices: list[str]) -> str:
    """`; did you mean 'x'?` for a close match among `choices`, else nothing. Options are
    compared without their dashes (`--wat` is not close to `--status` for sharing `--`)."""
    import difflib  # only on this error path: ~1.1 ms to import here (up to 9 ms loaded)

    bare = {choice.lstrip("-"): choice for choice in choices}
    close = difflib.get_close_matches(word.lstrip("-"), list(bare), n=1, cutoff=0.6)
    return f"; did you mean {bare[close[0]]!r}?" if close else ""


def _is_option(token: str) -> bool:
    """Whether argparse reads `token` as an option (`-3` and `-2.5` are values)."""
    if not token.startswith("-") or token == "-":
        return False
    try:
        float(token)
    except ValueError:
        return True
    return False


class Parser(argparse.ArgumentParser):
    """An `alp` parser whose usage errors name their parser and what is wrong first.

    An option a subcommand does not know is reported by that subcommand (its usage, and the
    closest of its own options) before anything else it would say: argparse's root parser
    reported `unrecognized arguments` with the root's usage, and a missing required option
    hid the mistyped one that was meant to give it (`schedule add --evry 1h`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", Formatter)
        super().__init__(*args, **kwargs)
        #: the words this parser was given, for `error` to look for an unknown option in
        self.given: list[str] = []

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self.given = list(sys.argv[1:] if args is None else args)
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            unknown = self.unknown_option(extras)
            self.error(unknown or f"unrecognized arguments: {' '.join(extras)}")
        return namespace, extras

    def unknown_option(self, tokens: list[str]) -> str | None:
        """`unknown option '--limt'; did you mean '--limit'?` for the first of `tokens`
        that is no option of this parser (nor a prefix argparse would take for one)."""
        known = self._option_string_actions
        for before, token in zip(["", *tokens], tokens, strict=False):
            flag = token.partition("=")[0]
            if not _is_option(token) or flag in known:
                continue
            if before in known and known[before].nargs != 0:
                continue  # the value of the option before it (`--prompt -x`): argparse's
            if flag.startswith("--"):
                if any(option.startswith(flag) for option in known):
                    continue
            elif flag[:2] in known:
                continue  # `-fq`, `-n3`: short options joined, or a short one's value
            return f"unknown option {flag!r}{suggestion(flag, sorted(known))}"
        return None

    def error(self, message: str) -> NoReturn:
        if self._subparsers is None:
            message = self.unknown_option(self.given) or message
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        print(f"  `{self.prog} --help` explains every option", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        choices = action.choices
        if choices is not None and value not in choices:
            names = [str(choice) for choice in choices]
            raise argparse.ArgumentError(
                action,
                f"invalid choice: {value!r} (choose from {', '.join(names)})"
                f"{suggestion(str(value), names)}",
            )


class VersionAction(argparse.Action):
    """`--version`, read from the installed package's metadata only when asked."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        print(f"{parser.prog} {package_version()}")
        raise SystemExit(0)


def package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("alp")
    except PackageNotFoundError:
        return "unknown (not installed)"


def add_global_options(parser: argparse.ArgumentParser, *, root: bool) -> None:
    """The root parser holds the defaults; every subparser repeats the options with no
    default, so `alp --json ping` and `alp ping --json` both work and a subparser never
    overwrites what was given before the command word."""
    for flags, helptext, valued in GLOBAL_OPTIONS:
        kwargs: dict[str, Any] = {"help": helptext}
        if not valued:
            kwargs["action"] = "store_true"
        if not root:
            kwargs["default"] = argparse.SUPPRESS
        parser.add_argument(flags, **kwargs)


def actions(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[Parser]:
    """The ACTION level of a command (`alp thread ACTION`)."""
    return parser.add_subparsers(
        dest="action", metavar="ACTION", required=True, parser_class=Parser
    )


def add(sub: argparse._SubParsersAction[Parser], name: str, helptext: str) -> Parser:
    """A subcommand or action with its one-line help and the global options."""
    parser = sub.add_parser(name, help=helptext, description=helptext)
    add_global_options(parser, root=False)
    return parser


def build_parser(
    only: str | None = None, action: str | None = None, *, describe: bool = False
) -> Parser:
    """The parser of `alp COMMAND …`; with `only`, just that command's branch, and with
    `action` (one the command declares), just that action's under it; `describe` adds bare
    `alp`'s own options, for help, completion and the man page."""
    parser = Parser(
        prog="alp",
        description="Threads that outlive your agent runs. Bare `alp [--title T] [--runtime R] "
        "[--agent A] [-- RUNTIME_ARGS…]` starts a new thread and its first run in this "
        "terminal.",
        epilog="Exit codes: 0 ok, 1 domain error (its name printed), 2 usage, "
        "3 daemon unreachable. `alp help COMMAND` explains a command.",
    )
    parser.add_argument("--version", action=VersionAction)
    add_global_options(parser, root=True)
    if describe:
        # For help, completion and the man page: bare `alp`'s own options belong in the
        # description (calls are parsed by `build_start_parser`).
        start_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name, (_module, helptext) in COMMANDS.items():
        if only is None or name == only:
            command = load(name)
            declared = getattr(command, "ACTIONS", None)
            if declared is None:
                command.configure(add(sub, name, helptext))
                continue
            branch = actions(add(sub, name, helptext))
            for action_name, (action_help, configure) in declared.items():
                if action not in declared or action == action_name:
                    configure(add(branch, action_name, action_help))
    return parser


def build_start_parser() -> Parser:
    """Bare `alp`: a new thread and its first root."""
    parser = Parser(
        prog="alp",
        usage="alp [--title T] [--runtime R] [--agent A] [-- RUNTIME_ARGS…]\n"
        "       alp COMMAND …   (`alp help` lists the commands)",
        description="Start a new Thread and run its first root in this terminal.",
    )
    parser.add_argument("--version", action=VersionAction)
    add_global_options(parser, root=True)
    start_options(parser)
    return parser


def start_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--title", help="bare alp: the new thread's title")
    runtime_options(parser)


def parse(argv: list[str]) -> Arguments:
    ours, rest = split_runtime_args(argv)
    words = command_words(ours)
    command = words[0] if words else None
    if command in COMMANDS:
        action = words[1] if len(words) > 1 and not {"-h", "--help"} & set(ours) else None
        args = build_parser(only=command, action=action).parse_args(ours, Arguments())
    elif command is not None:
        # `alp --titel T`: the mistyped option left its value looking like a command word
        start = build_start_parser()
        unknown = start.unknown_option(ours[: ours.index(command)])
        if unknown is not None:
            start.error(unknown)
        print(
            f"alp: {command!r} is not an alp command{suggestion(command, list(COMMANDS))}\n"
            "  `alp help` lists the commands",
            file=sys.stderr,
        )
        raise SystemExit(EXIT_USAGE)
    elif "-h" in ours or "--help" in ours:
        build_parser(describe=True).print_help()
        raise SystemExit(0)
    else:
        args = build_start_parser().parse_args(ours, Arguments())
        args.command = "start"
    args.rest = rest
    return args
