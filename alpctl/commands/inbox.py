"""`alp inbox [--thread T]`, `alp inbox confirm ID`, `alp inbox dismiss ID`: directive
handoffs wait here for you; confirmed, one is delivered as your own words."""

from __future__ import annotations

from alpctl.handoff_render import confirmed, handoff_line, inbox
from alpctl.invocation import EXIT_OK, Invocation, UsageError
from alpctl.lists import emit_list, list_options

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from alpctl.command_line import Arguments

_EPILOG = """\
A handoff sent with --directive asks its target thread to act, so no agent takes it on
another thread's word: it waits here. `alp inbox confirm ID` delivers it to the target as
your own words (waking the thread if it is idle); `alp inbox dismiss ID` drops it (the
record stays in `alp thread show`). Only you, from your own shell, can confirm: a run
asking is refused."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.usage = "alp inbox [--thread T] | alp inbox confirm ID | alp inbox dismiss ID"
    parser.epilog = _EPILOG
    parser.add_argument(
        "action", nargs="?", choices=("list", "confirm", "dismiss"), default="list",
        help="list (default), confirm ID or dismiss ID",
    )  # fmt: skip
    parser.add_argument("id", nargs="?", help="the item (`alp inbox` lists them)")
    parser.add_argument(
        "--thread", metavar="THREAD", help="list only this thread's inbox (id or title)"
    )
    list_options(parser, default=None, most=0)


def run(args: Arguments, inv: Invocation) -> int:
    if args.action == "list":
        if args.id:
            raise UsageError(f"`alp inbox` lists; did you mean `alp inbox confirm {args.id}`?")
        params = {"thread": args.thread} if args.thread else {}
        listed = inv.client.call("inbox/list", params)
        items = [*listed["items"], *listed.get("proposals", [])]
        emit_list(inv.out, args, listed, items, inbox)
        return EXIT_OK
    if not args.id:
        raise UsageError(f"which item? alp inbox {args.action} ID (`alp inbox` lists them)")
    if args.action == "confirm":
        inv.out.emit(inv.client.call("inbox/confirm", {"id": args.id}), confirmed)
    else:
        if args.id.startswith("prop_"):
            dropped = inv.client.call("memory/dismiss", {"id": args.id})
            inv.out.emit(dropped, lambda p: f"dismissed memory proposal {p['id']}")
        else:
            dropped = inv.client.call("inbox/dismiss", {"id": args.id})
            inv.out.emit(dropped, lambda h: f"dismissed:\n{handoff_line(h, 'in')}")
    return EXIT_OK
