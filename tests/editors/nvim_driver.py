"""Driving a check script (tests/editors/*_check.lua) in a real `nvim --headless`: the
script writes `want-STEP` into $ALP_NVIM_STEPS when it needs the test to act (make a thread,
restart the daemon), waits for `done-STEP`, and writes its report to $ALP_NVIM_REPORT."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from tests.editors.conftest import NVIM_PLUGIN, REPO


def drive(
    nvim: str, check: str, env: dict[str, str], cwd: Path, actions: dict[str, Callable[[], object]]
) -> dict[str, object]:
    """Run tests/editors/CHECK in nvim, doing each step it asks for; its report."""
    steps = Path(env["ALP_NVIM_STEPS"])
    steps.mkdir()
    argv = [nvim, "--headless", "-u", "NONE", "-i", "NONE", "--cmd", f"set rtp^={NVIM_PLUGIN}"]
    argv += [
        "--cmd",
        "runtime plugin/alp.lua",
        "-c",
        f"luafile {REPO / 'tests' / 'editors' / check}",
    ]
    stderr_path = steps.parent / "nvim.stderr"
    with stderr_path.open("wb") as stderr:
        process = subprocess.Popen(
            argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=stderr,
        )  # fmt: skip
        try:
            for name, action in actions.items():
                deadline = time.monotonic() + 180
                while not (steps / f"want-{name}").exists() and process.poll() is None:
                    assert time.monotonic() < deadline, f"nvim never asked for step {name}"
                    time.sleep(0.05)
                if process.poll() is not None:
                    break  # it failed before this step: its report says why
                action()
                (steps / f"done-{name}").write_text("done")
            process.wait(timeout=180)
        finally:
            if process.poll() is None:
                process.kill()
    report: dict[str, object] = json.loads(Path(env["ALP_NVIM_REPORT"]).read_text())
    report["stderr"] = stderr_path.read_text(errors="replace")
    return report
