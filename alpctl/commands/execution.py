"""`alp execution ACTION ID`: show, logs, cancel one execution (a run)."""

from __future__ import annotations

import sys

from alpctl import render
from alpctl.invocation import EXIT_INTERRUPTED, EXIT_OK, Invocation
from alpctl.parser import actions, add

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from alpctl.client import Client
    from alpctl.command_line import Arguments


def configure(parser: argparse.ArgumentParser) -> None:
    sub = actions(parser)
    add(sub, "show", "its runtime, outcome, policy and, when it failed, its output's tail")
    logs = add(
        sub,
        "logs",
        "what a headless run printed (stdout here, stderr on stderr); interactive runs "
        "printed to their terminal",
    )
    logs.add_argument("-f", "--follow", action="store_true", help="keep printing until it settles")
    logs.add_argument(
        "--raw", action="store_true", help="the runtime's own output (its JSONL), as printed"
    )
    add(sub, "cancel", "end it and every run it started")
    for action in sub.choices.values():
        action.add_argument("execution_id", help="the execution's id (exec_…)")


def run(args: Arguments, inv: Invocation) -> int:
    ref = {"executionId": args.execution_id}
    if args.action == "logs":
        return logs(args, inv)
    method = "execution/show" if args.action == "show" else "execution/cancel"
    inv.out.emit(inv.client.call(method, ref), lambda e: render.execution(e, inv.out.style))
    return EXIT_OK


def read_all(client: Client, execution_id: str) -> dict[str, Any]:
    """Everything printed so far: the daemon returns at most a limit per call, so ask on
    from the offsets until a call brings nothing new."""
    chunk: dict[str, Any] = client.call("execution/logs", {"executionId": execution_id})
    while True:
        offsets = {"stdoutOffset": chunk["stdoutOffset"], "stderrOffset": chunk["stderrOffset"]}
        more = client.call("execution/logs", {"executionId": execution_id, **offsets})
        if not (more["stdout"] or more["stderr"]):
            return chunk
        more["stdout"] = chunk["stdout"] + more["stdout"]
        more["stderr"] = chunk["stderr"] + more["stderr"]
        chunk = more


def no_logs(execution_id: str, thread_id: str | None) -> str:
    """Where to read what a run said that printed to a terminal, not to alpd."""
    if thread_id is None:
        return (
            f"alp: {execution_id} is a session imported from before alp: its output went to its "
            f"terminal. To read what it said, make it a thread: `alp thread adopt {execution_id}`"
            ", then `alp thread log THREAD`"
        )
    return (
        f"alp: {execution_id} ran in a terminal: its output went there, not to alpd (what it "
        f"said: `alp thread log {thread_id}`)"
    )


def logs(args: Arguments, inv: Invocation) -> int:
    """What the run printed: Claude's and Codex's JSONL as conversation text (`--raw`: as
    printed; `--json`: the daemon's chunk)."""
    from alpctl.runs import OutputPrinter

    printer = OutputPrinter(raw=args.raw, style=inv.out.style, tty=inv.out.tty)
    if args.follow and not inv.out.as_json:
        from alpctl.runs import follow, stopped_waiting

        try:
            follow(inv.client, args.execution_id, printer)
        except KeyboardInterrupt:
            print(stopped_waiting(args.execution_id), file=sys.stderr)
            return EXIT_INTERRUPTED
        return EXIT_OK
    chunk = read_all(inv.client, args.execution_id)
    if inv.out.as_json:
        inv.out.json(chunk)
    else:
        printer.feed(chunk["stdout"], chunk["stderr"])
        printer.flush()
        if not chunk["headless"]:
            print(no_logs(args.execution_id, chunk.get("threadId")), file=sys.stderr)
    return EXIT_OK
