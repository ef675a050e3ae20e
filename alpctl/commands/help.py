"""`alp help [COMMAND [ACTION]]`: the same text as `alp COMMAND [ACTION] --help`."""

from __future__ import annotations

from alpctl.invocation import EXIT_OK, Invocation
from alpctl.parser import build_parser, parse

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from alpctl.command_line import Arguments


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("topic", nargs="*", metavar="COMMAND", help="a command and its action")


def run(args: Arguments, inv: Invocation) -> int:
    if not args.topic:
        build_parser(describe=True).print_help()
        return EXIT_OK
    try:
        parse([*args.topic, "--help"])
    except SystemExit as done:  # the help was printed (0), or the unknown word named (2)
        return done.code if isinstance(done.code, int) else EXIT_OK
    return EXIT_OK
