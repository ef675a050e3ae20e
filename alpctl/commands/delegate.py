"""`alp delegate AGENT -- TASK`: from inside a run, a child run for an agent it may delegate to."""

from __future__ import annotations

from alpctl import render
from alpctl.invocation import EXIT_OK, Invocation, UsageError

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from alpctl.command_line import Arguments


def configure(parser: argparse.ArgumentParser) -> None:
    parser.usage = "alp delegate AGENT -- TASK"
    parser.epilog = (
        "The agent must be in the calling agent's delegatesTo (config.toml); the child runs "
        "headless under alpd in the root's graph (`alp delegation tree`)."
    )
    parser.add_argument("agent", help="the agent to delegate to")


def run(args: Arguments, inv: Invocation) -> int:
    task = " ".join(args.rest or []).strip()
    if not task:
        raise UsageError(f"what should {args.agent} do? alp delegate {args.agent} -- TASK")
    result = inv.client.call("execution/delegate", {"agent": args.agent, "task": task})
    inv.out.emit(result, lambda r: render.execution(r["execution"], inv.out.style))
    return EXIT_OK
