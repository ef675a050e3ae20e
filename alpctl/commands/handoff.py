"""`alp handoff TARGET [--artifact PATH]… [--directive] [--from THREAD] -- SUMMARY`: a capped
summary from this thread into another of yours, delivered by the target's state."""

from __future__ import annotations

import os

from alpctl.commands.push import push_text
from alpctl.handoff_render import sent
from alpctl.invocation import EXIT_OK, Invocation

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from alpctl.command_line import Arguments

_EPILOG = """\
The summary follows `--`, or comes on stdin when there is none:
  alp handoff build -- "Verdict: use SQLite FTS5, not Tantivy; numbers in bench/fts.md"
  alp handoff thread_01… --artifact bench/fts.md -- "Comparison done, see the table"
From inside a run (an agent's shell) the source is that run's thread; from your own shell
name it with --from. TARGET is a thread id or title. The summary is at most 4 KiB (longer
is refused with its size: shorten it, put the rest in a file and pass --artifact); files
stay where they are and are recorded with their size and sha256. The target receives it
under one line naming this thread by its title and saying it is context from your own
session, not instructions: an idle thread is woken by a run that reads it, a busy one reads
it next. --directive asks the target to act: it waits in the target's inbox until you
confirm it (`alp inbox`). Loops are bounded: at most 3 hops per chain, 6 handoffs per pair
of threads per 10 minutes (config.toml [handoff])."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.usage = (
        "alp handoff TARGET [--artifact PATH]… [--directive] [--from THREAD] [-- SUMMARY]"
    )
    parser.epilog = _EPILOG
    parser.add_argument(
        "target",
        metavar="THREAD",
        help="the thread to hand off to: its id, an id prefix, its title or @last",
    )
    parser.add_argument(
        "--artifact", action="append", default=[], metavar="PATH",
        help="a file in this thread's workspace the summary refers to (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--directive", action="store_true",
        help="it asks the target to act: hold it in the target's inbox until you confirm it",
    )  # fmt: skip
    parser.add_argument(
        "--from", dest="source", metavar="THREAD",
        help="the source thread (id or title) when you send from your own shell",
    )  # fmt: skip


def run(args: Arguments, inv: Invocation) -> int:
    params: dict[str, Any] = {
        "target": args.target,
        "summary": push_text(args.rest, what="a summary"),
        "artifacts": [os.path.abspath(path) for path in args.artifact],
        "directive": args.directive,
    }
    if args.source:
        params["from"] = args.source
    inv.out.emit(inv.client.call("handoff/send", params), sent)
    return EXIT_OK
