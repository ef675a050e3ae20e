"""`alp hold [--off]`: from inside a run, don't interrupt it — what arrives for its thread
waits for the next round instead of reaching it mid-work — or (`--off`) take deliveries
mid-run again. A hold ends when the run settles."""

from __future__ import annotations

from alpctl.invocation import EXIT_OK, Invocation

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from alpctl.command_line import Arguments

_EPILOG = """\
A run that must not be interrupted (a migration half done, a long edit) says so:
  alp hold          pushes, handoffs and results wait for the thread's next round
  alp hold --off    its hook takes them mid-run again
Outside a run it is refused (PIN_OUTSIDE_EXECUTION)."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.usage = "alp hold [--off]"
    parser.epilog = _EPILOG
    parser.add_argument(
        "--off", action="store_true", help="take deliveries mid-run again (end the hold)"
    )


def run(args: Arguments, inv: Invocation) -> int:
    inv.out.emit(inv.client.call("delivery/hold", {"hold": not args.off}), held)
    return EXIT_OK


def held(result: dict[str, Any]) -> str:
    waiting = result["waiting"]
    if result["held"]:
        return (
            f"holding: {result['executionId']} is not interrupted; what arrives waits for the "
            f"thread's next round ({waiting} waiting)"
        )
    return f"taking deliveries mid-run again: {result['executionId']} ({waiting} waiting)"
