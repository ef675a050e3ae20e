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


def timeout_seconds(text: str) -> int:
    """Seconds of `90s`, `30m`, `2h`, `1h30m` or `45` (UsageError otherwise)."""
    total, number = 0, ""
    units = {"d": 86400, "h": 3600, "m": 60, "s": 1}
    for char in text.strip().lower():
        if char.isdigit():
            number += char
        elif char in units and number:
            total, number = total + int(number) * units[char], ""
        else:
            raise UsageError(f"--timeout {text!r} is not a duration: use e.g. 90s, 30m or 2h")
    total += int(number) if number else 0
    if total < 1:
        raise UsageError(f"--timeout {text!r} is not a duration: use e.g. 90s, 30m or 2h")
    return total


def start_or_continue(args: Arguments, inv: Invocation, method: str, params: dict[str, Any]) -> int:
    if (args.wait or args.follow) and not args.headless:
        raise UsageError(
            "--wait and --follow need --headless (an interactive run is in this terminal)"
        )
    if args.headless and args.prompt is None and not args.rest:
        raise UsageError(
            "--headless needs --prompt TEXT (what the run is to do), or the program's "
            "arguments after `--` for a command agent"
        )
    cwd = os.path.abspath(args.cwd) if args.cwd else None
    params.update(
        {
            "runtime": args.runtime,
            "agent": args.agent,
            "headless": args.headless,
            "prompt": args.prompt,
            "args": args.rest or [],
            # A new thread is made here; a thread's root runs in its workspace unless --cwd.
            "cwd": cwd or (os.getcwd() if method == "thread/start" else None),
            "timeoutSeconds": timeout_seconds(args.timeout) if args.timeout else None,
            "budgetUsd": args.budget_usd,
            "budgetTokens": args.budget_tokens,
        }
    )
    client = inv.client
    with HeldInterrupt() as held:
        result = client.call(method, {k: v for k, v in params.items() if v is not None})
    where = result["execution"].get("cwd")
    if where and where != os.getcwd() and not inv.out.as_json:
        print(
            f"alp: runs in {where}, "
            + ("as --cwd asked" if cwd else "the thread's workspace (--cwd DIR to run elsewhere)"),
            file=sys.stderr,
        )
    if not args.headless:
        from alpctl.launch import run_interactive

        return run_interactive(client, result, inv.out)
    execution = result["execution"]
    if not (args.wait or args.follow):
        inv.out.emit(result, lambda r: f"{r['thread']['id']}: started {execution['id']} (headless)")
        return EXIT_OK
    try:
        held.raise_if_hit()
        if args.follow:
            shown = OutputPrinter(raw=args.raw, style=inv.out.style, tty=inv.out.tty)
            printer = None if inv.out.as_json else shown
            result["execution"] = follow(client, execution["id"], printer)
        else:
            result["execution"] = wait(client, execution["id"])
    except KeyboardInterrupt:
        print(stopped_waiting(execution["id"]), file=sys.stderr)
        return EXIT_INTERRUPTED
    inv.out.emit(result, lambda r: render.execution(r["execution"], inv.out.style))
    return EXIT_OK if result["execution"]["outcome"] == "completed" else EXIT_DOMAIN


class HeldInterrupt:
    """A first Ctrl-C while alpd starts the root is held until its answer is in, so that we
    can say which run goes on; a second one interrupts at once."""

    def __init__(self) -> None:
        self.hit = False

    def __enter__(self) -> HeldInterrupt:
        import signal

        def hold(signum: int, frame: object) -> None:
            if self.hit:
                raise KeyboardInterrupt
            self.hit = True

        self._previous = signal.signal(signal.SIGINT, hold)
        return self

    def __exit__(self, *exc: object) -> None:
        import signal

        signal.signal(signal.SIGINT, self._previous)

    def raise_if_hit(self) -> None:
        if self.hit:
            raise KeyboardInterrupt


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


def follow(client: Client, execution_id: str, printer: OutputPrinter | None) -> dict[str, Any]:
    """Print the run's stdout and stderr as they grow (through `printer`; None: print
    nothing, for JSON output, but wait the same), until it settles; its final state."""
    offsets = {"stdoutOffset": 0, "stderrOffset": 0}
    while True:
        chunk = client.call("execution/logs", {"executionId": execution_id, **offsets})
        if printer is not None:
            printer.feed(chunk["stdout"], chunk["stderr"])
        grew = (chunk["stdoutOffset"], chunk["stderrOffset"]) != tuple(offsets.values())
        offsets = {"stdoutOffset": chunk["stdoutOffset"], "stderrOffset": chunk["stderrOffset"]}
        if chunk["settled"] and not grew:
            if printer is not None:
                printer.flush()
            execution: dict[str, Any] = client.call("execution/show", {"executionId": execution_id})
            return execution
        if not grew:
            client.call("execution/wait", {"executionId": execution_id, "timeout": FOLLOW_POLL})


class OutputPrinter:
    """A run's output to our stdout and stderr: as printed (`raw`), or each complete line of
    Claude's stream-json and Codex's JSONL as conversation text (`alpctl.transcript_render`,
    the shape `alp thread log` prints; a line that is not JSON is printed as it is). A
    partial last line waits for its end (at most `PARTIAL_MAX` characters are held)."""

    PARTIAL_MAX = 1 << 20

    def __init__(self, *, raw: bool, style: Any, tty: bool) -> None:
        import shutil

        self.raw = raw
        self.style = style
        self.width = shutil.get_terminal_size((100, 24)).columns if tty else 100
        self.partial = ""

    def feed(self, stdout: str, stderr: str) -> None:
        if self.raw:
            sys.stdout.write(stdout)
        elif stdout:
            text = self.partial + stdout
            lines = text.split("\n")
            self.partial = lines.pop()
            if len(self.partial) > self.PARTIAL_MAX:
                lines.append(self.partial)
                self.partial = ""
            self._render(lines)
        sys.stdout.flush()
        if stderr:
            sys.stderr.write(stderr)
            sys.stderr.flush()

    def flush(self) -> None:
        """The last line, which ended without a newline: plain text stays as printed."""
        if self.partial:
            from protocol.runtime_output import event_of

            if event_of(self.partial) is None:
                sys.stdout.write(self.partial)
            else:
                self._render([self.partial])
            self.partial = ""
            sys.stdout.flush()

    def _render(self, lines: list[str]) -> None:
        from alpctl.transcript_render import render_stream_line

        shown = [
            render_stream_line(line, self.width, self.style) if line.strip() else line
            for line in lines
        ]
        text = "\n".join(line for line in shown if line is not None)
        if text:
            sys.stdout.write(text + "\n")
