"""`alp mcp` start: from launching the process to its answer to `initialize`.

Claude Code holds its prompt, and Codex its first model request, until the MCP servers of a
run have answered `initialize`, so this is time every run alp launches waits. Timed, as the
runtimes do it (spawn, write one `initialize` line on stdin, read one line from stdout):

* the floor: a stdlib-only Python that answers `initialize` with a fixed line, run by the
  same interpreter as alp (`python -I`), so interpreter start and a JSON round trip;
* `alp mcp` as installed (a wheel in a venv of its own, bytecode compiled: bench.install);
* for reference, the smallest server on the official MCP SDK (one tool, `MCPServer`), which
  `alp mcp` was built on before: the SDK is not a dependency of alp any more, so it runs
  from this checkout's environment, where it is a development dependency;
* `python -I -c pass`, the interpreter's own start, printed for scale.

Runs alternate between the commands; medians over ALP_BENCH_RUNS (default 15) of each.
Goal: `alp mcp` within 3× the floor: most of the difference is the start of alp's CLI
(argument parsing, the client module), which every `alp` command pays. CPU time (user +
system, from wait4) is printed beside wall time as the steadier measure on a loaded machine.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import Result
from bench.install import installed

RUNS = int(os.environ.get("ALP_BENCH_RUNS", "15"))

INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        },
    }
).encode()

ECHO_SERVER = r"""
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    result = {"protocolVersion": request["params"]["protocolVersion"], "capabilities": {},
              "serverInfo": {"name": "echo", "version": "0"}}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}) + "\n")
    sys.stdout.flush()
"""

SDK_SERVER = r"""
from mcp.server.mcpserver import MCPServer
server = MCPServer(name="sdk")
def ping(text: str) -> str:
    return text
server.add_tool(ping, name="ping", description="echo")
server.run("stdio")
"""


def until_initialized(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall milliseconds from spawn to the `initialize` answer, and the process's CPU ms."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(INITIALIZE + b"\n")
    process.stdin.flush()
    line = process.stdout.readline()
    elapsed = (time.perf_counter() - started) * 1000
    process.stdin.close()
    _, _, usage = os.wait4(process.pid, 0)
    process.returncode = 0
    if "protocolVersion" not in json.loads(line or b"{}").get("result", {}):
        error = process.stderr.read().decode(errors="replace") if process.stderr else ""
        raise RuntimeError(f"{command[:3]} did not answer initialize: {line!r} {error}")
    return elapsed, (usage.ru_utime + usage.ru_stime) * 1000


def bare_start(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env)
    _, _, usage = os.wait4(process.pid, 0)
    process.returncode = 0
    return (time.perf_counter() - started) * 1000, (usage.ru_utime + usage.ru_stime) * 1000


def run() -> list[Result]:
    alp = installed()
    with tempfile.TemporaryDirectory(prefix="alp-bench-mcp-") as scratch:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ALP_")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.update({"ALP_SOCKET": str(Path(scratch) / "none.sock"), "ALP_NO_AUTOSTART": "1"})
        commands = {
            "floor": [alp.python, "-I", "-c", ECHO_SERVER],
            "alp": [alp.script("alp"), "mcp"],
            "sdk": [sys.executable, "-I", "-c", SDK_SERVER],
            "pass": [alp.python, "-I", "-c", "pass"],
        }
        wall: dict[str, list[float]] = {name: [] for name in commands}
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        for n in range(RUNS):
            for name in list(commands) if n % 2 == 0 else list(commands)[::-1]:
                measure = bare_start if name == "pass" else until_initialized
                elapsed, used = measure(commands[name], env)
                wall[name].append(elapsed)
                cpu[name].append(used)
    w = {name: statistics.median(values) for name, values in wall.items()}
    c = {name: statistics.median(values) for name, values in cpu.items()}
    return [
        Result("alp mcp start→initialize, wall", w["alp"], "ms", w["floor"],
               w["alp"] / w["floor"], "<= 3"),
        Result("alp mcp start→initialize, CPU", c["alp"], "ms", c["floor"],
               c["alp"] / c["floor"], ""),
        Result("MCP SDK server start→initialize, wall", w["sdk"], "ms", w["floor"],
               w["sdk"] / w["floor"], ""),
        Result("MCP SDK server start→initialize, CPU", c["sdk"], "ms", c["floor"],
               c["sdk"] / c["floor"], ""),
        Result("python -I -c pass, wall", w["pass"], "ms", None, None, ""),
    ]  # fmt: skip
