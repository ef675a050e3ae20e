"""`alp status`: the daemon's state (as `alp daemon status`)."""

from __future__ import annotations

from alpctl.commands import daemon
from alpctl.invocation import Invocation

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from alpctl.command_line import Arguments


def configure(parser: argparse.ArgumentParser) -> None:
    return None


def run(args: Arguments, inv: Invocation) -> int:
    return daemon.status(inv)
