"""The CLI's own cost, as installed: `alp` against a raw stdlib client making the same call.

alp runs from a wheel installed in a venv of its own with compiled bytecode (`bench.install`),
against an alpd from the same venv. For `ping --json`, `thread list --json` and `search WORD
--json`, the whole command (start Python, connect, one call, print) is timed against the
floor: the same venv's `python -I` running a stdlib-only client (socket + json) that makes
the same call and prints the same bytes (checked before timing). Runs alternate between the
two, medians over ALP_BENCH_RUNS (default 25) of each. Goal: at most 1.3× the floor.

Wall time is what the goal is about, but on a machine shared with other work it stretches
with the load, and more for the process that runs longer; the CPU time each process used
(user + system, from wait4) is printed beside it as the steadier measure of the same cost.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from alpd.testing.daemon import running_daemon
from bench import Result
from bench.corpus import codename, sessions
from bench.install import installed

RUNS = int(os.environ.get("ALP_BENCH_RUNS", "25"))

# The floor: what one CLI call costs with nothing but the stdlib. argv[1] is the method,
# argv[2] its params as JSON.
RAW_CLIENT = r"""
import json, os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(os.environ["ALP_SOCKET"])
request = {"jsonrpc": "2.0", "id": 1, "method": sys.argv[1], "params": json.loads(sys.argv[2])}
s.sendall(json.dumps(request).encode() + b"\n")
buf = b""
while not buf.endswith(b"\n"):
    buf += s.recv(65536)
json.dump(json.loads(buf)["result"], sys.stdout, separators=(",", ":"), ensure_ascii=False)
sys.stdout.write("\n")
"""


def timed(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU milliseconds of one run of `command`."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert process.stderr is not None
    error = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = (time.perf_counter() - started) * 1000
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{command[:3]} failed: {error.decode(errors='replace')}")
    return elapsed, (usage.ru_utime + usage.ru_stime) * 1000


def compare(
    label: str, alp: list[str], raw: list[str], env: dict[str, str], cwd: Path
) -> list[Result]:
    commands = {"alp": alp, "raw": raw}
    outputs = {
        name: json.loads(subprocess.run(c, env=env, cwd=cwd, capture_output=True).stdout)
        for name, c in commands.items()
    }
    if outputs["alp"] != outputs["raw"]:
        raise RuntimeError(f"the two clients disagree on {label}: {outputs}")
    wall: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    for run in range(RUNS):
        for name in list(commands) if run % 2 == 0 else list(commands)[::-1]:
            elapsed, used = timed(commands[name], env, cwd)
            wall[name].append(elapsed)
            cpu[name].append(used)
    ours, floor = statistics.median(wall["alp"]), statistics.median(wall["raw"])
    ours_cpu, floor_cpu = statistics.median(cpu["alp"]), statistics.median(cpu["raw"])
    return [
        Result(f"{label} (installed), wall", ours, "ms", floor, ours / floor, "<= 1.3"),
        Result(f"{label} (installed), CPU", ours_cpu, "ms", floor_cpu, ours_cpu / floor_cpu, ""),
    ]


def run() -> list[Result]:
    alp = installed()
    with tempfile.TemporaryDirectory(prefix="alp-bench-cli-") as scratch:
        base = Path(scratch)
        workspace = base / "workspace"
        workspace.mkdir()
        with running_daemon(base, python=alp.python) as daemon:
            with daemon.client() as client:
                for n in range(20):
                    client.call("thread/create", {"title": f"bench {n}", "cwd": str(workspace)})
                for directory in sessions(15):
                    client.call("history/import", {"runtime": "claude", "path": str(directory)})
            env = {k: v for k, v in daemon.env.items() if k != "PYTHONDONTWRITEBYTECODE"}
            raw = [alp.python, "-I", "-c", RAW_CLIENT]
            word = codename(7)
            cases = [
                ("alp ping", ["ping"], "daemon/ping", {}),
                ("alp thread list", ["thread", "list"], "thread/list", {"cwd": str(workspace)}),
                ("alp search", ["search", word], "history/search", {"query": word, "limit": 20}),
            ]
            results: list[Result] = []
            for label, argv, method, params in cases:
                results += compare(
                    label,
                    [alp.script("alp"), *argv, "--json"],
                    [*raw, method, json.dumps(params)],
                    env,
                    workspace,
                )
    return results
