"""Runtime adapters: the built-ins, and third parties' through the `alp.runtimes` group."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from alpd.errors import RuntimeNotFound
from alpd.runtimes.registry import adapter, adapters


def test_builtin_adapters_are_registered() -> None:
    assert {"claude", "codex", "command"} <= set(adapters())


def test_an_unknown_runtime_is_runtime_not_found_naming_the_known_ones() -> None:
    with pytest.raises(RuntimeNotFound) as info:
        adapter("nope")
    assert "claude" in info.value.message and "nope" in info.value.message


def test_a_third_party_adapter_is_found_through_its_entry_point(tmp_path: Path) -> None:
    package = tmp_path / "alp_fake_runtime.py"
    package.write_text(
        textwrap.dedent(
            """
            class Fake:
                name = "fake"
                supports_interactive = False
                supports_headless = True
                install_hint = "nothing to install"
            """
        )
    )
    dist = tmp_path / "alp_fake_runtime-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: alp-fake-runtime\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[alp.runtimes]\nfake = alp_fake_runtime:Fake\n")
    probe = (
        f"import sys; sys.path.insert(0, {str(tmp_path)!r}); "
        "from alpd.runtimes.registry import adapter; print(type(adapter('fake')).__name__)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "Fake"
