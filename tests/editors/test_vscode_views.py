"""The VS Code extension's transcript, diff and memory views (issues 22, 25, 27): their
logic (src/transcript.ts, src/views.ts) under plain Node against a real alpd, as the
extension's other modules are tested (VS Code itself cannot be installed here), and its
times in the CLI's one format (src/clock.ts against alpctl/clock.py) in several zones."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from alpctl.clock import local_time
from tests.editors.conftest import DECISION, MEMORY, VSCODE, ViewsDaemon
from tests.editors.test_nvim_views import ISO_MOMENTS, in_zone
from tests.editors.test_vscode_extension import npx, run_node_test

pytestmark = pytest.mark.editors


@pytest.fixture(scope="module")
def compiled(node_modules_ready: None) -> Path:
    done = npx("tsc", "-p", ".")
    assert done.returncode == 0, done.stdout + done.stderr
    return VSCODE / "out"


def test_transcript_diff_and_memory_views_against_a_real_alpd(
    node: str, compiled: Path, views: ViewsDaemon
) -> None:
    env = {
        **views.daemon.env,
        "ALP_TEST_WORK": str(views.work),
        "ALP_TEST_THREAD_ID": views.thread_id,
        "ALP_TEST_ADOPTED_ID": views.adopted_id,
        "ALP_TEST_MEMORY_ID": views.memory_id,
        "ALP_TEST_MEMORY": MEMORY,
        "ALP_TEST_DECISION": DECISION,
    }
    done = run_node_test(node, compiled, "views.test.js", env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "# pass 5" in done.stdout and "# fail 0" in done.stdout, done.stdout


ZONES = ["Europe/Berlin", "America/New_York", "Asia/Kolkata", "Asia/Dubai", "Australia/Lord_Howe"]


@pytest.mark.parametrize("zone", [*ZONES, "UTC"])
def test_vscode_times_are_the_clis(node: str, compiled: Path, zone: str) -> None:
    script = (
        f"const {{ localTime }} = require({json.dumps(str(compiled / 'src' / 'clock.js'))});"
        "const moments = JSON.parse(process.env.ALP_TIMES);"
        "console.log(JSON.stringify(moments.map((iso) => localTime(iso))));"
    )
    env = {**os.environ, "TZ": zone, "ALP_TIMES": json.dumps(ISO_MOMENTS)}
    done = subprocess.run(
        [node, "-e", script], env=env, capture_output=True, text=True, timeout=60
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [in_zone(zone, local_time, iso) for iso in ISO_MOMENTS]
