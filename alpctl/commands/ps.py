"""`alp ps [--all] [--watch]`: what is running — roots and children with their cost so far,
queued deliveries, schedules, and the daemon's own services."""

from __future__ import annotations

import sys
import time

from alpctl import background_render as show
from alpctl.invocation import EXIT_OK, Invocation

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from alpctl.command_line import Arguments

WATCH_SECONDS = 2.0


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--all", action="store_true", help="include temp work (hidden otherwise)")
    parser.add_argument(
        "--watch", action="store_true", help=f"refresh every {WATCH_SECONDS:g} s until Ctrl-C"
    )


def run(args: Arguments, inv: Invocation) -> int:
    params = {"all": args.all}
    if not args.watch:
        inv.out.emit(inv.client.call("daemon/ps", params), show.ps)
        return EXIT_OK
    try:
        while True:
            result = inv.client.call("daemon/ps", params)
            if not inv.out.as_json:
                sys.stdout.write("\x1b[H\x1b[2J")
            inv.out.emit(result, show.ps)
            sys.stdout.flush()
            time.sleep(WATCH_SECONDS)
    except KeyboardInterrupt:
        return EXIT_OK
