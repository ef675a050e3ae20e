"""`alp man`: the manual page of alp (roff), generated from the parser that parses the calls.

alp man > ~/.local/share/man/man1/alp.1 && man alp
"""

from __future__ import annotations

import sys

from alpctl.invocation import EXIT_OK, Invocation

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from alpctl.command_line import Arguments


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = "Install: alp man > ~/.local/share/man/man1/alp.1 && man alp"


def page() -> str:
    from argparse_manpage.manpage import Manpage  # only here, like completion

    from alpctl.parser import build_parser, package_version

    manpage = Manpage(build_parser(describe=True))
    manpage.version = package_version()
    manpage.source = f"alp {manpage.version}"
    manpage.manual = "alp manual"
    manpage.description = "threads that outlive your agent runs"
    return str(manpage)


def run(args: Arguments, inv: Invocation) -> int:
    sys.stdout.write(page())
    return EXIT_OK
