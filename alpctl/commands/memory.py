"""`alp memory ACTION`: memory across threads — add, promote, list, show, supersede,
retract, review. Only you write memory; a run proposes (the MCP tool `remember`) into your
inbox."""

from __future__ import annotations

import os

from alpctl import memory_render as show
from alpctl.invocation import EXIT_OK, Invocation, UsageError
from alpctl.lists import checked_limit, emit_list, list_options
from alpctl.parser import actions, add

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from alpctl.command_line import Arguments

KINDS = ["fact", "convention", "preference", "lesson"]
SCOPES = ["workspace", "global"]
#: the most memories `memory/list` sends (protocol.messages.memory.MEMORY_LIST_MAX)
MEMORY_LIST_MAX = 1000


def configure(parser: argparse.ArgumentParser) -> None:
    sub = actions(parser)
    usage = "write a memory: add [--scope S] [--kind K] [--file F] [--entry N]… -- TEXT"
    new = add(sub, "add", usage)
    new.add_argument("--scope", choices=SCOPES, default="workspace", help="default: workspace")
    new.add_argument("--kind", choices=KINDS, default="fact", help="default: fact")
    new.add_argument("--file", help="a file the statement is about (review tells when it changes)")
    new.add_argument("--entry", type=int, action="append", default=[], metavar="ID",
                     help="a history entry it came from (repeatable)")  # fmt: skip
    promote = add(sub, "promote", "a pinned line becomes a memory: promote THREAD PIN")
    promote.add_argument("thread", help="id, id prefix, title or @last")
    promote.add_argument("pin", help="the line's number in `alp thread context`, or its id")
    promote.add_argument("--scope", choices=SCOPES, default="workspace", help="default: workspace")
    promote.add_argument("--kind", choices=KINDS, help="default: convention for a constraint")
    lst = add(sub, "list", "memories of this workspace and the global ones")
    lst.add_argument("--all", action="store_true", help="every workspace's")
    lst.add_argument("--retracted", action="store_true", help="the retracted ones too")
    lst.add_argument("--query", help="only those holding every word of this")
    list_options(lst, default=200, most=MEMORY_LIST_MAX)
    memory_id = "the memory's id (mem_…)"
    add(sub, "show", "a memory, its versions and its citation").add_argument("id", help=memory_id)
    sup = add(sub, "supersede", "a new text for a memory: supersede ID [--kind K] -- TEXT")
    sup.add_argument("id", help=memory_id)
    sup.add_argument("--kind", choices=KINDS, help="a new kind (default: the same)")
    add(sub, "retract", "take a memory out of use for good").add_argument("id", help=memory_id)
    review = add(sub, "review", "memories not confirmed lately, or whose cited file changed")
    review.add_argument("--days", type=int, default=90, help="not confirmed for this long")
    review.add_argument("--all", action="store_true", help="every workspace's")
    review.add_argument("--confirm", action="append", default=[], metavar="ID",
                        help="confirm this memory is still true (repeatable)")  # fmt: skip


def _text(args: Arguments, usage: str) -> str:
    text = " ".join(args.rest or []).strip()
    if not text:
        raise UsageError(f"the text follows `--`: {usage}")
    return text


def run(args: Arguments, inv: Invocation) -> int:
    call, emit = inv.client.call, inv.out.emit
    action = args.action
    if action == "add":
        params: dict[str, Any] = {
            "text": _text(args, "alp memory add -- prices are stored in cents"),
            "kind": args.kind,
            "scope": args.scope,
            "cwd": os.getcwd(),
        }
        if args.file:
            params["file"] = os.path.abspath(args.file)
        if args.entry:
            params["entries"] = args.entry
        emit(call("memory/add", params), show.memory_written)
    elif action == "promote":
        params = {"thread": args.thread, "pin": args.pin, "scope": args.scope}
        if args.kind:
            params["kind"] = args.kind
        emit(call("memory/promote", params), show.memory_written)
    elif action == "list":
        limit = checked_limit(args, MEMORY_LIST_MAX)
        params = {"cwd": os.getcwd(), "all": args.all, "retracted": args.retracted,
                  "limit": limit}  # fmt: skip
        if args.query:
            params["query"] = args.query
        listed = call("memory/list", params)
        emit_list(inv.out, args, listed, listed["memories"], show.memory_list, limit=limit,
                  most=MEMORY_LIST_MAX)  # fmt: skip
    elif action == "show":
        emit(call("memory/show", {"id": args.id}), show.memory_show)
    elif action == "supersede":
        params = {"id": args.id, "text": _text(args, "alp memory supersede ID -- NEW TEXT")}
        if args.kind:
            params["kind"] = args.kind
        emit(call("memory/supersede", params), show.memory_written)
    elif action == "retract":
        emit(call("memory/retract", {"id": args.id}), show.memory_written)
    else:
        params = {"cwd": os.getcwd(), "all": args.all, "days": args.days, "confirm": args.confirm}
        emit(call("memory/review", params), show.memory_review)
    return EXIT_OK
