"""Under CI=true a skipped e2e or needs_root test fails the run; elsewhere it only skips."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]

SCRATCH = """
import pytest

@pytest.mark.needs_root
@pytest.mark.skipif(True, reason="pretend we are not root")
def test_needs_root():
    pass

@pytest.mark.e2e
def test_real_cli():
    pytest.skip("pretend the runtime is not installed")

@pytest.mark.skip(reason="an ordinary skip")
def test_ordinary():
    pass

def test_plain():
    pass
"""


def run_scratch(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_scratch.py").write_text(SCRATCH)
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    e2e: e\n    needs_root: r\n")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "ci_gate", "-q", "-rA", "-p", "no:cacheprovider",
         str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize("ci", ["true", "1"])
def test_under_ci_a_skipped_e2e_or_root_test_fails(tmp_path: Path, ci: str) -> None:
    done = run_scratch(tmp_path, ci)
    assert done.returncode == 1, done.stdout
    # A skip at setup (skipif) fails as an error, one in the test body as a failure.
    assert "1 failed, 1 passed, 1 skipped, 1 error" in done.stdout, done.stdout
    assert "needs_root test was skipped: pretend we are not root" in done.stdout
    assert "e2e test was skipped: pretend the runtime is not installed" in done.stdout


def test_without_ci_they_only_skip(tmp_path: Path) -> None:
    done = run_scratch(tmp_path, None)
    assert done.returncode == 0, done.stdout
    assert "1 passed, 3 skipped" in done.stdout, done.stdout


def test_ci_run_exports_ci_true() -> None:
    script = (TESTS.parent / ".ci" / "run").read_text()
    assert "export CI=true" in script.split("make test")[0]


def run_real(tests: list[str], tmp_path: Path, *, path: str, shadow: bool = False) -> str:
    """The repository's own test files under CI=true, with `PATH` set to `path` and, with
    `shadow`, a `playwright` that cannot be imported (as if it were not installed)."""
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env.update(CI="true", PATH=path)
    if shadow:
        fake = tmp_path / "shadow" / "playwright"
        fake.mkdir(parents=True)
        (fake / "__init__.py").write_text("raise ImportError('not installed')\n")
        env["PYTHONPATH"] = str(fake.parent)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-x", "-q", "-rA", "-p", "no:cacheprovider", *tests],
        cwd=TESTS.parent, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout[-3000:]
    return done.stdout


def test_under_ci_the_real_browser_tests_fail_when_they_would_skip(tmp_path: Path) -> None:
    out = run_real(
        ["tests/browser/test_web_page.py"], tmp_path, path=os.environ["PATH"], shadow=True
    )
    assert "CI=true and this browser test was skipped: playwright is not installed" in out, out


def test_under_ci_the_real_editors_tests_fail_when_they_would_skip(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    out = run_real(["tests/editors/test_nvim_plugin.py"], tmp_path, path=str(empty))
    assert "CI=true and this editors test was skipped: nvim is not on PATH" in out, out


def test_under_ci_the_systemd_analyze_tests_fail_when_they_would_skip(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    out = run_real(["tests/unit/test_units.py"], tmp_path, path=str(empty))
    assert "CI=true and this systemd test was skipped: systemd-analyze not installed" in out, out
