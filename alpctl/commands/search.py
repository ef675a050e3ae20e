"""`alp search WORDS`: search across your threads' history, by keyword and by meaning."""

from __future__ import annotations

from alpctl import history_cli, render
from alpctl.invocation import EXIT_OK, Invocation

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from alpctl.command_line import Arguments

_TIME_HELP = "ISO time or date, or 30m / 12h / 7d ago"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("query", nargs="+", help='words; "a phrase"; prefix*')
    parser.add_argument("--thread", metavar="THREAD", help="only this thread's history")
    parser.add_argument("--runtime", help="only entries of this runtime (claude, codex …)")
    parser.add_argument(
        "--role", choices=["user", "assistant", "tool", "system"], help="only entries of this role"
    )
    parser.add_argument(
        "--since", type=history_cli.parse_time, help=f"only entries from then on: {_TIME_HELP}"
    )
    parser.add_argument(
        "--until", type=history_cli.parse_time, help=f"only entries until then: {_TIME_HELP}"
    )
    parser.add_argument("--limit", type=int, default=20, help="at most this many hits (20)")
    parser.add_argument(
        "--mode",
        choices=["hybrid", "keyword", "meaning"],
        help="hybrid (default: both, fused; keyword alone, said so, while the meaning index "
        "is not ready), keyword, or meaning",
    )


def run(args: Arguments, inv: Invocation) -> int:
    params = history_cli.search_params(args)
    result = inv.client.call("history/search", params)
    inv.out.emit(result, lambda r: render.search(r, params))
    return EXIT_OK
