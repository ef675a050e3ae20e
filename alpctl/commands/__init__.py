"""The commands of `alp`, one module each.

A command module has two functions:

- `configure(parser)` adds its arguments (and its actions, with `alpctl.parser.actions`),
  or `ACTIONS`, a dict of action → (one line of help, a function adding that action's
  arguments), of which a call builds only the invoked action;
- `run(args, inv)` does the work with `inv.client` (connected on first use) and `inv.out`,
  and returns the exit code.

A declaration that only calls `parser.add_argument` (with `action="store_true"`, `nargs`,
`type`, `choices`, `default`, `dest`) is also read by `alpctl.command_line`, which parses
the plain lines of that command without argparse; a command with actions of its own or
option groups is parsed by argparse every time.

Adding a command is a module here and a line in `COMMANDS`; only the invoked command's module
is imported, so a command may import what it needs at the top of its module (what it imports
on every call is counted: tests/integration/test_cli_cost.py).
"""

from __future__ import annotations

import sys

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from types import ModuleType

    from alpctl.command_line import Arguments
    from alpctl.invocation import Invocation

    class Command(ModuleType):
        def configure(self, parser: argparse.ArgumentParser) -> None: ...  # or ACTIONS
        def run(self, args: Arguments, inv: Invocation) -> int: ...


#: command → (module under alpctl.commands, one line of help), in the order `alp --help` lists
COMMANDS: dict[str, tuple[str, str]] = {
    "thread": (
        "thread",
        "threads: create, continue, list, show, log, context, clear, undo, diff, restore, "
        "close, archive, adopt, export, import, budget, sync, reconcile",
    ),
    "push": ("push", "a message from a script or alert into a thread: wakes it, or queues"),
    "handoff": ("handoff", "a capped summary from one of your threads into another"),
    "inbox": ("inbox", "handoffs and memory proposals waiting for you: list, confirm, dismiss"),
    "memory": (
        "memory",
        "memory across threads: add, promote, list, show, supersede, retract, review",
    ),
    "context": ("context", "from inside a run: pin work state the next root must know"),
    "hold": ("hold", "from inside a run: don't interrupt it with deliveries (--off: take them)"),
    "delegate": ("delegate", "from inside a run: start a delegated child run"),
    "delegation": ("delegation", "the graph of runs a root started: tree"),
    "execution": ("execution", "one execution (run): show, logs, cancel"),
    "search": ("search", "search your threads' history by keyword and by meaning"),
    "model": ("model", "fetch a model for search by meaning into alp's cache, with progress"),
    "import": ("history_import", "index native sessions from before alp (not in a thread)"),
    "mcp": ("mcp", "alp's tools for the agent inside a run, as a stdio MCP server"),
    "schedule": (
        "schedule",
        "run a prompt in a thread on a schedule: add, list, show, pause, resume, rm, run",
    ),
    "ps": ("ps", "what is running: jobs with their cost, the queue, schedules, services"),
    "activity": ("activity", "what ran, newest first, with its report and cost"),
    "web": ("web", "the web page: turn it on and print a one-time login URL"),
    "channel": (
        "channel",
        "chat doors (Telegram, WeChat): list, pair a sender, unpair, mute, unmute, trust-codex",
    ),
    "daemon": ("daemon", "the daemon: status, ping, reload its config, stop"),
    "doctor": (
        "doctor",
        "is everything working? runtimes and logins, socket, config, disk, web page, tasks",
    ),
    "status": ("status", "the daemon's state (same as `alp daemon status`)"),
    "ping": ("ping", "is the daemon there? (same as `alp daemon ping`)"),
    "help": ("help", "help on a command: `alp help thread list`"),
    "completion": ("completion", "a shell completion script: bash, zsh or fish"),
    "man": ("man", "the manual page (roff), generated from this parser"),
}


def load(name: str) -> Command:
    # `__import__`, not `importlib.import_module`: importing importlib (and the warnings
    # module it imports) is a cost every call would pay.
    qualified = f"alpctl.commands.{COMMANDS[name][0]}"
    __import__(qualified)
    module: Command = sys.modules[qualified]  # type: ignore[assignment]
    return module
