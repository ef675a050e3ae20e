"""The VS Code extension (editors/vscode): its protocol client under plain Node against a
real alpd (every method the extension uses, and a live notification), details that show
hostile text as text, request deadlines and cancellation, the live connection across a
daemon restart, `tsc` compiling the whole extension, and `vsce package` packing it. VS Code
itself cannot be installed here."""

from __future__ import annotations

import json
import os
import subprocess
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from protocol.paths import default_socket_path
from tests.editors.conftest import DECISION, NODE_MODULES, VSCODE, SeededDaemon

pytestmark = pytest.mark.editors


def npx(
    tool: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(NODE_MODULES / ".bin" / tool), *args],
        cwd=VSCODE,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def compiled(node_modules_ready: None) -> Path:
    done = npx("tsc", "-p", ".")
    assert done.returncode == 0, done.stdout + done.stderr
    return VSCODE / "out"


@pytest.fixture
def busy_thread(seeded: SeededDaemon) -> Iterator[str]:
    """A thread whose root runs (a headless `sleep`) for the whole test."""
    done = seeded.daemon.cli(
        "--title", "still working", "--runtime", "command", "--headless", "--json",
        "--", "sleep", "300", cwd=str(seeded.work),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    yield result["thread"]["id"]
    seeded.daemon.call("execution/cancel", {"executionId": result["execution"]["id"]})


def test_the_client_module_speaks_to_a_real_alpd_under_node(
    node: str, compiled: Path, seeded: SeededDaemon, busy_thread: str
) -> None:
    env = {
        **seeded.daemon.env,
        "ALP_TEST_EXPECTED_SOCKET": str(default_socket_path(seeded.daemon.env)),
        "ALP_TEST_WORK": str(seeded.work),
        "ALP_TEST_THREAD_ID": seeded.thread_id,
        "ALP_TEST_EXECUTION_ID": seeded.execution_id,
        "ALP_TEST_DECISION": DECISION,
        "ALP_TEST_BUSY_THREAD_ID": busy_thread,
    }
    done = subprocess.run(
        [node, "--test", str(compiled / "test" / "client.test.js")],
        cwd=VSCODE,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "# pass 4" in done.stdout and "# fail 0" in done.stdout, done.stdout


def run_node_test(
    node: str, compiled: Path, name: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [node, "--test", str(compiled / "test" / name)],
        cwd=VSCODE,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_details_escape_titles_pins_and_recaps(node: str, compiled: Path) -> None:
    """Issue 21, point 18: `<img onerror>`, `[link](…)`, `![i](…)` in a title, a pin, a
    summary or a recap render (with markdown-it, the preview's parser) as text only."""
    done = run_node_test(node, compiled, "details.test.js")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "# pass 3" in done.stdout and "# fail 0" in done.stdout, done.stdout


def test_requests_time_out_and_honour_cancellation(node: str, compiled: Path) -> None:
    """Against a server that never answers: REQUEST_TIMEOUT, REQUEST_CANCELLED and
    CONNECTION_CLOSED, each at once rather than a wait without end."""
    done = run_node_test(node, compiled, "requests.test.js")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "# pass 3" in done.stdout and "# fail 0" in done.stdout, done.stdout


def test_the_live_connection_survives_a_daemon_restart(
    node: str, compiled: Path, seeded: SeededDaemon, tmp_path: Path
) -> None:
    """The node test asks for each step by writing want-NAME in ALP_TEST_STEPS; this side
    does it (a real restart of alpd, then a thread made from another connection) and
    answers done-NAME."""
    steps = tmp_path / "steps"
    steps.mkdir()
    env = {**seeded.daemon.env, "ALP_TEST_STEPS": str(steps)}
    actions: dict[str, Callable[[], object]] = {
        "restart": seeded.daemon.restart,
        "after-restart": lambda: seeded.daemon.call(
            "thread/create", {"title": "after the restart", "cwd": str(seeded.work)}
        ),
    }
    argv = [node, "--test", str(compiled / "test" / "reconnect.test.js")]
    process = subprocess.Popen(
        argv, cwd=VSCODE, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        for name, action in actions.items():
            deadline = time.monotonic() + 180
            while not (steps / f"want-{name}").exists() and process.poll() is None:
                assert time.monotonic() < deadline, f"the node test never asked for {name}"
                time.sleep(0.05)
            if process.poll() is not None:
                break  # it failed before this step: its output says why
            action()
            (steps / f"done-{name}").write_text("done")
        out, _ = process.communicate(timeout=180)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, out
    assert "# pass 2" in out and "# fail 0" in out, out


def test_the_client_module_never_imports_vscode(compiled: Path) -> None:
    for name in (
        "client.js",
        "render.js",
        "connection.js",
        "clock.js",
        "transcript.js",
        "views.js",
    ):
        assert 'require("vscode")' not in (compiled / "src" / name).read_text()


def test_the_extension_packs_with_vsce(compiled: Path, tmp_path: Path) -> None:
    target = tmp_path / "alp-threads.vsix"
    env = {**os.environ, "npm_config_cache": str(tmp_path / "npm-cache")}
    done = npx("vsce", "package", "--out", str(target), env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    with zipfile.ZipFile(target) as vsix:
        names = set(vsix.namelist())
        manifest = json.loads(vsix.read("extension/package.json"))
    assert "extension/out/src/extension.js" in names
    assert "extension/node_modules/vscode-jsonrpc/package.json" in names
    assert not any(name.startswith("extension/out/test/") for name in names)
    views = {view["id"] for view in manifest["contributes"]["views"]["alp"]}
    assert views == {"alp.threads", "alp.running", "alp.memory"}
