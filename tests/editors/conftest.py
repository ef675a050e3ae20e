"""Fixtures for the editor clients (Neovim, VS Code) and the OpenRPC tooling check.

They need programs outside Python: `nvim` (Debian's `neovim`), `node`, and the npm packages
under editors/vscode/node_modules. `make test` installs them (`make editors`); without them
these tests are skipped with the reason — except under ``CI=true``, where a missing part fails
the test instead (a CI run that silently skips its editor tests proves nothing).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VSCODE = REPO / "editors" / "vscode"
NODE_MODULES = VSCODE / "node_modules"
NVIM_PLUGIN = REPO / "editors" / "nvim"


def _skip_or_fail(reason: str) -> None:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"CI=true and an editor test prerequisite is missing: {reason}", pytrace=False)
    pytest.skip(f"{reason} (run `make editors`)")


@pytest.fixture
def node() -> str:
    found = shutil.which("node")
    if found is None:
        _skip_or_fail("node is not on PATH")
    assert found is not None
    if not (NODE_MODULES / ".package-lock.json").exists():
        _skip_or_fail("editors/vscode/node_modules is not installed")
    return found


@pytest.fixture
def nvim() -> str:
    found = shutil.which("nvim")
    if found is None:
        _skip_or_fail("nvim is not on PATH (apt-get install neovim)")
    assert found is not None
    return found
