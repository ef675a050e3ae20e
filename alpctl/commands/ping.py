"""`alp ping`: is the daemon there (as `alp daemon ping`)."""

from __future__ import annotations

from alpctl.invocation import EXIT_OK, Invocation

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from alpctl.command_line import Arguments


def configure(parser: argparse.ArgumentParser) -> None:
    return None


def run(args: Arguments, inv: Invocation) -> int:
    # Not through `alpctl.commands.daemon`: its sub-actions' grammar needs argparse.
    inv.out.emit(inv.client.call("daemon/ping"), lambda r: f"alpd {r['version']} pid {r['pid']}")
    return EXIT_OK
