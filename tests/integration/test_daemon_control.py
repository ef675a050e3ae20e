"""What a person asks of the daemon: errors that name what exists, re-reading config.toml
(SIGHUP, `alp daemon reload`) and `alp daemon stop`."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

from alpd.testing.daemon import DaemonProcess

LEAD = '[agents.lead]\nruntime = "command"\n'


def start_error(d: DaemonProcess, cwd: Path, *flags: str) -> dict[str, Any]:
    done = d.cli("--json", *flags, "--headless", "--", "true", cwd=str(cwd))
    assert done.returncode == 1, (done.stdout, done.stderr)
    error: dict[str, Any] = json.loads(done.stdout)["error"]
    return error


def test_an_unknown_agent_names_itself_the_known_agents_and_the_config_file(
    alpd: DaemonProcess, tmp_path: Path
) -> None:
    error = start_error(alpd, tmp_path, "--agent", "revewer")
    assert error["name"] == "AGENT_NOT_FOUND"
    config = str(alpd.home / "config.toml")
    for word in ("'revewer'", "claude", "codex", "command", config):
        assert word in error["message"], word
    assert error["data"]["knownAgents"] == ["claude", "codex", "command"]
    assert error["data"]["config"] == config


def test_an_unknown_runtime_is_runtime_not_found(alpd: DaemonProcess, tmp_path: Path) -> None:
    error = start_error(alpd, tmp_path, "--runtime", "gemini")
    assert error["name"] == "RUNTIME_NOT_FOUND"
    assert "claude" in error["message"]


def _lead_known(d: DaemonProcess, cwd: Path) -> bool:
    done = d.cli("--json", "--agent", "lead", "--headless", "--", "true", cwd=str(cwd))
    return done.returncode == 0


def test_sighup_rereads_the_config(alpd: DaemonProcess, tmp_path: Path) -> None:
    assert not _lead_known(alpd, tmp_path)
    (alpd.home / "config.toml").write_text(LEAD)
    alpd.process.send_signal(signal.SIGHUP)  # type: ignore[union-attr]
    deadline = time.monotonic() + 30
    while not _lead_known(alpd, tmp_path):
        assert time.monotonic() < deadline, alpd.log_text()
    assert alpd.process is not None and alpd.process.poll() is None


def test_daemon_reload_rereads_the_config_and_keeps_it_when_broken(
    alpd: DaemonProcess, tmp_path: Path
) -> None:
    config = alpd.home / "config.toml"
    config.write_text(LEAD)
    done = alpd.cli("daemon", "reload", "--json")
    assert done.returncode == 0, done.stderr
    reloaded = json.loads(done.stdout)
    assert reloaded["config"] == str(config)
    assert "lead" in reloaded["agents"] and "command" in reloaded["runtimes"]
    assert _lead_known(alpd, tmp_path)
    config.write_text('[agents.lead]\nruntime = "command"\nallowedTools = 3\n')
    broken = alpd.cli("daemon", "reload", "--json")
    assert broken.returncode == 1
    error = json.loads(broken.stdout)["error"]
    assert error["name"] == "CONFIG_INVALID"
    assert error["data"]["path"] == str(config) and error["data"]["line"] == 3
    assert _lead_known(alpd, tmp_path)  # the previous config stays


def test_daemon_stop_stops_it_and_returns_once_it_is_gone(alpd: DaemonProcess) -> None:
    done = alpd.cli("daemon", "stop")
    assert done.returncode == 0, done.stderr
    assert f"pid {alpd.pid}" in done.stdout
    assert alpd.process is not None and alpd.process.wait(30) == 0
    again = alpd.cli("daemon", "stop")
    assert again.returncode == 3
