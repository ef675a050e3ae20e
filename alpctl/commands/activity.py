"""`alp activity [--since 12h] [--thread ID] [--kind K]`: what ran, newest first, with its
kind, origin, outcome, report and cost."""

from __future__ import annotations

from alpctl import background_render as show
from alpctl import history_cli
from alpctl.invocation import EXIT_OK, Invocation

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from alpctl.command_line import Arguments

KINDS = ("interactive", "push", "scheduled", "sub-agent", "temp")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--since",
        type=history_cli.parse_time,
        help="ISO time or date, or 30m / 12h / 7d ago (default: everything)",
    )
    parser.add_argument("--thread", metavar="THREAD", help="only this thread's runs")
    parser.add_argument("--kind", choices=KINDS, help="only runs of this kind")
    parser.add_argument("--limit", type=int, default=200, help="at most this many (≤ 1000)")


def run(args: Arguments, inv: Invocation) -> int:
    params: dict[str, Any] = {"limit": args.limit}
    for key, value in (("since", args.since), ("threadId", args.thread), ("kind", args.kind)):
        if value:
            params[key] = value
    inv.out.emit(inv.client.call("activity/list", params), show.activity)
    return EXIT_OK
