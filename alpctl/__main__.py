"""Entry point of `alp` and `alpctl`.

A runtime's hook (`alp hook deliver`, run after every tool call of a Claude Code run) is
answered before the command line's modules are imported: it pays only for the stdlib client.
"""

import os
import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) == 2 and args[0] == "hook":
        from alpctl.hooks import run

        if run(args[1], sys.stdin, sys.stdout, os.environ):
            sys.stdout.flush()
            return 0
    from alpctl.cli import main as cli_main

    return cli_main(args)


__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
