"""Running an interactive root in the user's own terminal.

The daemon returns a launch spec (argv, env additions, cwd); we run it as our child in the
foreground (it owns the terminal, Ctrl-C goes to it, not to us), register its pid with
`execution/attach` so pins from inside it are recognised, and settle the root with its exit
status. The run is collected (reaped) only after that settle: while it is our zombie, alpd
leaves the root to us, so a run that exited 0 is `completed` however short it was. If we die
first, alpd still sees the process end and reconciles the root.

`alp`'s own exit code keeps its contract (0 the run completed, 1 it did not); the runtime's
exit status is reported beside it, in the closing line and as `exitCode` with `--json`, so a
runtime that exits 3 is never mistaken for "daemon unreachable".
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from alpctl.client import Client, DaemonUnreachable
from alpctl.invocation import EXIT_DOMAIN, EXIT_OK, Output

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def outcome_for(returncode: int) -> str:
    if returncode == 0:
        return "completed"
    if returncode < 0 or 128 < returncode <= 192:
        return "interrupted"
    return "failed"


def run_interactive(client: Client, result: dict[str, Any], out: Output) -> int:
    launch = result["launch"]
    execution = result["execution"]
    env = {**os.environ, **launch["env"]}
    bin_dir = os.path.dirname(sys.executable)
    if bin_dir not in env.get("PATH", "").split(os.pathsep):
        env["PATH"] = bin_dir + os.pathsep + env.get("PATH", os.defpath)
    try:
        process = subprocess.Popen(launch["argv"], env=env, cwd=launch["cwd"])
    except OSError as exc:
        client.call(
            "execution/settle",
            {
                "executionId": execution["id"],
                "threadId": execution["threadId"],
                "outcome": "failed",
                "summary": f"could not start {launch['argv'][0]}: {exc}",
            },
        )
        print(f"alp: could not start {launch['argv'][0]}: {exc}", file=sys.stderr)
        return EXIT_DOMAIN
    client.call("execution/attach", {"executionId": execution["id"], "pid": process.pid})
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        returncode = wait_uncollected(process)
    finally:
        signal.signal(signal.SIGINT, previous)
    outcome = outcome_for(returncode)
    exit_code = returncode if returncode >= 0 else 128 - returncode
    try:
        settled = settle(client, execution, outcome, exit_code)
    finally:
        process.wait()  # collected only now: until then alpd leaves the root to us
    thread = result["thread"]
    if out.as_json:
        out.json({"thread": thread, "execution": settled or execution, "exitCode": exit_code})
    status = "" if exit_code == 0 else f" ({launch['argv'][0]} exited {exit_code})"
    print(
        f"alp: root #{execution.get('sequence')} of {thread['id']} {outcome}{status}; "
        f"continue with `alp thread continue {thread['id']}`",
        file=sys.stderr,
    )
    return EXIT_OK if outcome == "completed" else EXIT_DOMAIN


def wait_uncollected(process: subprocess.Popen[bytes]) -> int:
    """Wait for the run to end without collecting it: while it is our zombie, alpd's
    reconcile knows its exit status is still ours to report, and never settles the root
    `interrupted` between the run's end and our settle (very short runs lost that race).
    Popen's convention: the exit status, or -N for a signal."""
    info = os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT)
    if info is None:  # not ended after all (cannot happen without WNOHANG)
        return process.wait()
    if info.si_code == os.CLD_EXITED:
        return info.si_status
    return -info.si_status


def settle(
    client: Client, execution: dict[str, Any], outcome: str, exit_code: int
) -> dict[str, Any] | None:
    """Record how the run ended, on a fresh connection (the first may have timed out while
    the run went on); None when the daemon is gone (it reconciles the root on its return)."""
    try:
        with Client.connect(client.socket_path) as settle_client:
            settled: dict[str, Any] = settle_client.call(
                "execution/settle",
                {
                    "executionId": execution["id"],
                    "threadId": execution["threadId"],
                    "outcome": outcome,
                    "exitCode": exit_code,
                },
            )
            return settled
    except DaemonUnreachable:
        print(
            "alp: the daemon is gone; it will reconcile this root when it returns", file=sys.stderr
        )
        return None
