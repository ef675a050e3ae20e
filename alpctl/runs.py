"""Starting a root (bare `alp`, `alp thread continue`) and following a headless one.

An interactive root runs in this terminal (`alpctl.launch`); a headless one runs under alpd,
and `--wait` / `--follow` stay with it until it settles. Ctrl-C while waiting stops only the
waiting: the run goes on, and we say how to follow it.
"""

from __future__ import annotations

import os
import sys

from alpctl import render
from alpctl.client import Client
from alpctl.invocation import EXIT_DOMAIN, EXIT_INTERRUPTED, EXIT_OK, Invocation, UsageError

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from alpctl.command_line import Arguments

#: how long one `execution/wait` may block while following a run's output (seconds)
FOLLOW_POLL = 0.5


def start(args: Arguments, inv: Invocation) -> int:
    """Bare `alp`: a new thread and its root #1."""
    return start_or_continue(args, inv, "thread/start", {"title": args.title})


def start_or_continue(args: Arguments, inv: Invocation, method: str, params: dict[str, Any]) -> int:
    if (args.wait or args.follow) and not args.headless:
        raise UsageError(
            "--wait and --follow need --headless (an interactive run is in this terminal)"
        )
    params.update(
        {
            "runtime": args.runtime,
            "agent": args.agent,
            "headless": args.headless,
            "prompt": args.prompt,
            "args": args.rest or [],
            "cwd": os.getcwd(),
        }
    )
    client = inv.client
    result = client.call(method, {k: v for k, v in params.items() if v is not None})
    if not args.headless:
        from alpctl.launch import run_interactive

        return run_interactive(client, result, inv.out)
    execution = result["execution"]
    if not (args.wait or args.follow):
        inv.out.emit(result, lambda r: f"{r['thread']['id']}: started {execution['id']} (headless)")
        return EXIT_OK
    try:
        if args.follow:
            result["execution"] = follow(client, execution["id"], inv.out.as_json)
        else:
            result["execution"] = wait(client, execution["id"])
    except KeyboardInterrupt:
        print(stopped_waiting(execution["id"]), file=sys.stderr)
        return EXIT_INTERRUPTED
    inv.out.emit(result, lambda r: render.execution(r["execution"], inv.out.style))
    return EXIT_OK if result["execution"]["outcome"] == "completed" else EXIT_DOMAIN


def stopped_waiting(execution_id: str) -> str:
    return (
        f"\nalp: stopped waiting; {execution_id} goes on under alpd.\n"
        f"  follow it:  alp execution logs {execution_id} -f\n"
        f"  its outcome: alp execution show {execution_id}   "
        f"(end it: alp execution cancel {execution_id})"
    )


def wait(client: Client, execution_id: str) -> dict[str, Any]:
    execution: dict[str, Any] = {"status": "running"}
    while execution["status"] != "settled":
        execution = client.call("execution/wait", {"executionId": execution_id, "timeout": 60})
    return execution


def follow(client: Client, execution_id: str, quiet: bool = False) -> dict[str, Any]:
    """Print the run's stdout and stderr to ours as they grow, until it settles; its final
    state. With `quiet` (JSON output) nothing is printed but the wait is the same."""
    offsets = {"stdoutOffset": 0, "stderrOffset": 0}
    while True:
        chunk = client.call("execution/logs", {"executionId": execution_id, **offsets})
        if not quiet:
            sys.stdout.write(chunk["stdout"])
            sys.stdout.flush()
            sys.stderr.write(chunk["stderr"])
            sys.stderr.flush()
        grew = (chunk["stdoutOffset"], chunk["stderrOffset"]) != tuple(offsets.values())
        offsets = {"stdoutOffset": chunk["stdoutOffset"], "stderrOffset": chunk["stderrOffset"]}
        if chunk["settled"] and not grew:
            execution: dict[str, Any] = client.call("execution/show", {"executionId": execution_id})
            return execution
        if not grew:
            client.call("execution/wait", {"executionId": execution_id, "timeout": FOLLOW_POLL})
