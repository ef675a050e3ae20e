"""`alp doctor`: everything a person needs working, in one screen, each line ok/warn/fail
with what to do. The daemon checks what it sees (`daemon/doctor`: config, socket, disk,
runtimes and their logins, alp for runs, web page, background tasks, chat channels); this
command adds what only the client sees: whether a daemon answers at all, and the `alp` a
login shell finds on its PATH (an agent's shell tool may start one). It never starts a
daemon: a missing one is the first thing to report. Exit 1 when a check fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from alpctl.client import DaemonUnreachable, ForeignDaemon
from alpctl.invocation import EXIT_DOMAIN, EXIT_OK, Invocation

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from alpctl.command_line import Arguments
    from alpctl.render import Style

#: a login shell reads the person's profile; one that hangs there is not waited on
SHELL_TIMEOUT = 5.0


def configure(parser: argparse.ArgumentParser) -> None:
    return None


def check(name: str, status: str, detail: str, fix: str | None = None) -> dict[str, Any]:
    found = {"name": name, "status": status, "detail": detail}
    return found if fix is None else {**found, "fix": fix}


def run(args: Arguments, inv: Invocation) -> int:
    checks: list[dict[str, Any]] = []
    alp_bin = None
    try:
        client = inv.running_daemon()
        ping = client.call("daemon/ping")
        checks.append(check("daemon", "ok", f"alpd {ping['version']}, pid {ping['pid']}"))
        found = client.call("daemon/doctor")
        checks.extend(found["checks"])
        alp_bin = found.get("alpBin")
    except DaemonUnreachable as exc:
        checks.append(
            check(
                "daemon",
                "fail",
                f"no daemon answers on {exc.socket_path} ({exc.reason})",
                f"start it: alpd --socket {exc.socket_path} (or `systemctl --user start "
                "alpd.socket`); any other alp command starts one",
            )
        )
    except ForeignDaemon as exc:
        checks.append(check("daemon", "fail", str(exc), "use a socket of your own (--socket)"))
    checks.append(login_shell_check(os.environ, alp_bin))
    inv.out.emit({"checks": checks}, lambda result: render(result["checks"], inv.out.style))
    return EXIT_DOMAIN if any(c["status"] == "fail" for c in checks) else EXIT_OK


def login_shell_check(environ: Any, alp_bin: str | None) -> dict[str, Any]:
    """The `alp` a login shell of the person's finds (`$SHELL -lc 'command -v alp'`)."""
    shell = environ.get("SHELL") or "/bin/sh"
    mine = alp_bin or shutil.which("alp") or sys.argv[0]
    directory = os.path.dirname(mine) or "the directory that holds alp"
    fix = f'add `export PATH="{directory}:$PATH"` to your ~/.profile (or your shell\'s login file)'
    try:
        done = subprocess.run(
            [shell, "-lc", "command -v alp"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=SHELL_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return check(
            "alp in a login shell",
            "warn",
            f"{shell} -l did not answer within {SHELL_TIMEOUT:.0f} s",
            "look at your shell's login files",
        )
    except OSError as exc:
        return check("alp in a login shell", "warn", f"{shell}: {exc.strerror}", "set SHELL")
    found = done.stdout.strip().splitlines()[-1:] if done.returncode == 0 else []
    if not found:
        return check(
            "alp in a login shell",
            "warn",
            f"{shell} -l finds no `alp` on its PATH: an agent's shell may not either "
            "(runs get $ALP_BIN)",
            fix,
        )
    if alp_bin is not None and os.path.realpath(found[0]) != os.path.realpath(alp_bin):
        return check(
            "alp in a login shell",
            "warn",
            f"{shell} -l finds {found[0]}, the daemon's is {alp_bin}: two installations",
            f"remove the other one, or {fix}",
        )
    return check("alp in a login shell", "ok", f"{shell} -l finds {found[0]}")


def render(checks: list[dict[str, Any]], style: Style) -> str:
    paint = {"ok": style.green, "warn": style.yellow, "fail": style.red}
    width = max(len(c["name"]) for c in checks)
    lines = []
    for c in checks:
        status = paint.get(c["status"], str)(f"{c['status']:<4}")
        lines.append(f"{status}  {c['name']:<{width}}  {c['detail']}")
        if c.get("fix") and c["status"] != "ok":
            lines.append(f"{'':4}  {'':<{width}}  → {c['fix']}")
    failed = sum(c["status"] == "fail" for c in checks)
    warned = sum(c["status"] == "warn" for c in checks)
    lines.append(
        f"{failed} failing, {warned} to look at" if failed or warned else "everything is working"
    )
    return "\n".join(lines)
