"""`alp daemon ACTION`: the daemon's state, and what a person asks of it."""

from __future__ import annotations

from alpctl import render
from alpctl.invocation import EXIT_OK, Invocation
from alpctl.parser import actions, add

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def configure(parser: argparse.ArgumentParser) -> None:
    sub = actions(parser)
    add(sub, "status", "uptime, paths, counts and background tasks")
    add(sub, "ping", "the daemon's version and pid, if one answers")


def run(args: argparse.Namespace, inv: Invocation) -> int:
    if args.action == "ping":
        return ping(inv)
    return status(inv)


def ping(inv: Invocation) -> int:
    inv.out.emit(inv.client.call("daemon/ping"), lambda r: f"alpd {r['version']} pid {r['pid']}")
    return EXIT_OK


def status(inv: Invocation) -> int:
    inv.out.emit(inv.client.call("daemon/status"), render.status)
    return EXIT_OK
