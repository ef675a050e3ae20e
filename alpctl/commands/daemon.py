"""`alp daemon ACTION`: the daemon's state, and what a person asks of it."""

from __future__ import annotations

from alpctl import render
from alpctl.client import Client, DaemonUnreachable
from alpctl.commands import ping
from alpctl.invocation import EXIT_OK, Invocation
from alpctl.parser import actions, add

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from alpctl.command_line import Arguments


def configure(parser: argparse.ArgumentParser) -> None:
    sub = actions(parser)
    add(sub, "status", "uptime, paths, counts and background tasks")
    add(sub, "ping", "the daemon's version and pid, if one answers")
    add(sub, "reload", "re-read config.toml (agents, runtimes) for the runs started from now on")
    add(sub, "stop", "stop the daemon once its requests in flight are answered; runs go on")


def run(args: Arguments, inv: Invocation) -> int:
    if args.action == "ping":
        return ping.run(args, inv)
    if args.action == "reload":
        result = inv.running_daemon().call("daemon/reload")
        inv.out.emit(
            result,
            lambda r: (
                f"reloaded {r['config']}: agents {', '.join(r['agents'])}; "
                f"runtimes {', '.join(r['runtimes'])}"
            ),
        )
        return EXIT_OK
    if args.action == "stop":
        return stop(inv)
    return status(inv)


#: how long `alp daemon stop` waits for the daemon to be gone (its drain takes up to 10 s)
STOP_TIMEOUT = 30.0


def stop(inv: Invocation) -> int:
    import time

    client = inv.running_daemon()
    result = client.call("daemon/stop")
    deadline = time.monotonic() + STOP_TIMEOUT
    while time.monotonic() < deadline:
        try:
            Client.connect(inv.socket_path).close()
        except DaemonUnreachable:
            break
        time.sleep(0.05)
    inv.out.emit(result, lambda r: f"alpd (pid {r['pid']}) stopped; headless runs go on")
    return EXIT_OK


def status(inv: Invocation) -> int:
    inv.out.emit(inv.client.call("daemon/status"), render.status)
    return EXIT_OK
