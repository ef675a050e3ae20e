"""What a call costs beyond the raw client: the modules `alp ping`, `alp thread list` and
`alp search` import over those of a stdlib client making the same call (`json`, `os`,
`socket`, `sys`; bench/bench_cli.py's floor).

Every module is a file to find, read and run on every call (~0.3 ms each here): a module
that joins one of these sets must be worth it, and the set below says so by naming it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import alpctl
from alpd.testing.daemon import DaemonProcess

ROOT = Path(alpctl.__file__).resolve().parent.parent

#: what every call imports beyond the raw client
EVERY_CALL = {
    "__future__",
    "alpctl",
    "alpctl.__main__",
    "alpctl.cli",
    "alpctl.client",
    "alpctl.command_line",
    "alpctl.commands",
    "alpctl.invocation",
    "protocol",
    "protocol.paths",
    "protocol.peercred",
}

#: and each command's own
COMMANDS = {
    "ping": {"alpctl.commands.ping"},
    # alpctl.clock: the one formatter of the times a person sees (stdlib `time` only)
    # alpctl.lists: -q and --limit of every long list (sys and alpctl.invocation only)
    "thread list": {"alpctl.commands.thread", "alpctl.render", "alpctl.clock", "alpctl.lists"},
    "search": {"alpctl.commands.search", "alpctl.history_cli", "alpctl.render", "alpctl.clock"},
}


def modules(code: str, env: dict[str, str], cwd: Path) -> tuple[set[str], str]:
    """The modules a fresh interpreter holds after `code`, and what it printed.

    `-I -S`: no site hook (an editable install's finder imports importlib and more), this
    checkout first on the path."""
    program = f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n{code}\n" + (
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", program],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stderr.splitlines()[-1])), done.stdout


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_call_imports_only_the_named_modules_beyond_the_raw_client(
    d: DaemonProcess, work: Path, command: str
) -> None:
    floor, _ = modules("import json, os, socket", d.env, work)
    argv = [*command.split(), *(["alp"] if command == "search" else []), "--json"]
    ours, printed = modules(
        f"import json\nfrom alpctl.__main__ import main\nrc = main({argv!r})\n"
        "sys.stdout.flush()\nassert rc == 0, rc",
        d.env,
        work,
    )
    json.loads(printed)  # the call did its work: a JSON document
    assert ours - floor <= EVERY_CALL | COMMANDS[command]
