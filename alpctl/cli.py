"""`alp` / `alpctl`: a command line in (`alpctl.command_line`), one or a few JSON-RPC calls,
text or `--json` out.

Exit codes: 0 ok, 1 domain error (its name printed), 2 usage, 3 daemon unreachable (with the
socket path and how to start it). No Python traceback reaches a person: Ctrl-C exits 130 with
a word on what goes on, a closed pipe (`alp thread list | head -1`) ends quietly, and an
unexpected error prints one line (`ALP_DEBUG=1` shows the traceback).
"""

from __future__ import annotations

import os
import sys

from alpctl.client import DaemonUnreachable, ForeignDaemon, RpcError
from alpctl.command_line import parse
from alpctl.commands import load
from alpctl.invocation import (
    EXIT_DOMAIN,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    Invocation,
    UsageError,
)

#: what a shell reports for a process ended by SIGPIPE (128 + 13)
EXIT_CLOSED_PIPE = 141


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        code = _main(argv)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        # The reader went away (`| head -1`): nothing more to say, to anyone. Point stdout at
        # /dev/null so the interpreter's final flush does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_CLOSED_PIPE
    except KeyboardInterrupt:
        print("\nalp: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "hook":
        from alpctl.hooks import run

        if run(argv[1], sys.stdin, sys.stdout, os.environ):
            return EXIT_OK
    args = parse(argv)
    inv = Invocation(args)
    try:
        if args.command == "start":
            from alpctl.runs import start

            return start(args, inv)
        return load(args.command).run(args, inv)
    except UsageError as exc:
        print(f"alp: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except RpcError as exc:
        if inv.out.as_json:
            error = {"code": exc.code, "name": exc.name, "message": exc.message, "data": exc.data}
            inv.out.json({"error": error})
        print(f"alp: {exc.name}: {exc.message}", file=sys.stderr)
        return EXIT_DOMAIN
    except ForeignDaemon as exc:
        print(f"alp: {exc}", file=sys.stderr)
        return EXIT_UNREACHABLE
    except DaemonUnreachable as exc:
        print(
            f"alp: no daemon answers on {exc.socket_path} ({exc.reason}).\n"
            f"  start it with: alpd --socket {exc.socket_path}   (or `make run`, or "
            "`systemctl --user start alpd.socket`)",
            file=sys.stderr,
        )
        return EXIT_UNREACHABLE
    except (BrokenPipeError, KeyboardInterrupt):
        raise
    except Exception as exc:
        if os.environ.get("ALP_DEBUG") == "1":
            raise
        print(
            f"alp: unexpected {type(exc).__name__}: {exc}\n"
            "  this is a bug in alp; ALP_DEBUG=1 shows the traceback for a report",
            file=sys.stderr,
        )
        return EXIT_DOMAIN
    finally:
        inv.close()
