"""`alp delegation tree [EXECUTION_ID]`: the graph of runs a root started."""

from __future__ import annotations

from alpctl import render
from alpctl.invocation import EXIT_OK, Invocation
from alpctl.parser import actions, add

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from alpctl.command_line import Arguments


def configure(parser: argparse.ArgumentParser) -> None:
    add(actions(parser), "tree", "the graph of a root, children indented").add_argument(
        "execution_id", nargs="?", help="any execution of the graph (default: the calling run)"
    )


def run(args: Arguments, inv: Invocation) -> int:
    params = {"executionId": args.execution_id} if args.execution_id else {}
    inv.out.emit(inv.client.call("delegation/tree", params), render.tree)
    return EXIT_OK
