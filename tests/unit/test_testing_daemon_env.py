"""A test daemon's environment keeps its runtimes' model calls on this machine."""

from __future__ import annotations

from pathlib import Path

import pytest

from alpd.testing.daemon import UNREACHABLE_API, daemon_env, running_daemon


def test_the_model_apis_are_a_closed_loopback_port_whatever_the_developer_set(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://api.anthropic.com")
    monkeypatch.setenv("OPENAI_BASE_URL", "https://api.openai.com/v1")
    env = daemon_env(tmp_path / "home", tmp_path / "s.sock")
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9" == UNREACHABLE_API
    assert env["OPENAI_BASE_URL"] == "http://127.0.0.1:9/v1"


def test_a_test_that_starts_a_model_server_points_the_runtimes_at_it(tmp_path: Path) -> None:
    env = daemon_env(
        tmp_path / "home", tmp_path / "s.sock", {"ANTHROPIC_BASE_URL": "http://127.0.0.1:4242"}
    )
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:4242"


def test_the_daemon_is_the_interpreters_own_alpd_not_one_in_the_current_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The benchmarks run an installed alp's interpreter from the checkout: `-m alpd` must not
    import the checkout's package instead."""
    decoy = tmp_path / "cwd" / "alpd"
    decoy.mkdir(parents=True)
    (decoy / "__init__.py").write_text("")
    (decoy / "__main__.py").write_text("raise SystemExit('the decoy ran')")
    monkeypatch.chdir(decoy.parent)
    (tmp_path / "d").mkdir()
    with running_daemon(tmp_path / "d") as d:
        assert d.call("daemon/ping")
