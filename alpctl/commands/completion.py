"""`alp completion bash|zsh|fish`: a completion script generated from this parser (shtab)."""

from __future__ import annotations

import sys

from alpctl.invocation import EXIT_OK, Invocation

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from alpctl.command_line import Arguments

SHELLS = ["bash", "zsh", "fish"]

_EPILOG = """\
Install it once:
  bash:  alp completion bash > ~/.local/share/bash-completion/completions/alp
  zsh:   alp completion zsh > "${fpath[1]}/_alp"     (a directory on your $fpath)
  fish:  alp completion fish > ~/.config/fish/completions/alp.fish"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = _EPILOG
    parser.add_argument("shell", choices=SHELLS, help="the shell to complete for")


def script(shell: str) -> str:
    import shtab  # only here: completion scripts are generated, never imported on a call

    from alpctl.parser import build_parser

    parser = build_parser(describe=True)
    text: str = shtab.complete(parser, shell=shell)
    return text


def run(args: Arguments, inv: Invocation) -> int:
    sys.stdout.write(script(args.shell))
    return EXIT_OK
