"""`alp activity [--since 12h] [--thread ID] [--kind K]`: what ran, newest first, with its
kind, origin, outcome, report and cost."""

from __future__ import annotations

from alpctl import background_render as show
from alpctl import history_cli
from alpctl.invocation import EXIT_OK, Invocation
from alpctl.lists import checked_limit, emit_list, list_options

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from alpctl.command_line import Arguments

KINDS = ("interactive", "push", "scheduled", "sub-agent", "temp")
#: the most runs `activity/list` sends
ACTIVITY_MAX = 1000


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--since",
        type=history_cli.parse_time,
        help="ISO time or date, or 30m / 12h / 7d ago (default: everything)",
    )
    parser.add_argument("--thread", metavar="THREAD", help="only this thread's runs")
    parser.add_argument("--kind", choices=KINDS, help="only runs of this kind")
    list_options(parser, default=200, most=ACTIVITY_MAX)


def run(args: Arguments, inv: Invocation) -> int:
    params: dict[str, Any] = {"limit": checked_limit(args, ACTIVITY_MAX)}
    for key, value in (("since", args.since), ("threadId", args.thread), ("kind", args.kind)):
        if value:
            params[key] = value
    result = inv.client.call("activity/list", params)
    emit_list(inv.out, args, result, result["items"], show.activity, key="executionId",
              limit=params["limit"], most=ACTIVITY_MAX)  # fmt: skip
    return EXIT_OK
