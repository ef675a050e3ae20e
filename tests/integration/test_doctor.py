"""`alp doctor` on a real alpd: each check ok on a working home, and each broken part named
with what to do — a config broken after start (its line), a runtime an agent needs that is
not there, a runtime not logged in (Claude's credentials file, `codex login status`), a disk
under the threshold (ALP_DOCTOR_MIN_FREE_BYTES fakes a full one), a socket others may
connect to, no daemon at all. Stand-in `claude` and `codex` scripts: no model is called."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from daemons import StartAlpd

from alpd.testing.daemon import DaemonProcess

#: a key of the test machine's environment must not count as a login here
NO_KEYS = {"ANTHROPIC_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": "", "CLAUDE_CODE_OAUTH_TOKEN": "",
           "OPENAI_API_KEY": "", "CODEX_API_KEY": ""}  # fmt: skip


def stand_in(path: Path, body: str) -> Path:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def config(tmp_path: Path, *, codex_logged_in: bool, claude_credentials: bool) -> str:
    claude_dir = tmp_path / "claude-config"
    claude_dir.mkdir(exist_ok=True)
    if claude_credentials:
        (claude_dir / ".credentials.json").write_text('{"claudeAiOauth": {}}')
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir(exist_ok=True)
    claude = stand_in(tmp_path / "claude", "echo never a model >&2; exit 9")
    answer = "echo 'Logged in using ChatGPT'; exit 0" if codex_logged_in else (
        "echo 'Not logged in' >&2; exit 1")  # fmt: skip
    codex = stand_in(tmp_path / "codex", f'[ "$1 $2" = "login status" ] || exit 9\n{answer}')
    return (
        f'[runtimes.claude]\ncommand = "{claude}"\n'
        f'env = {{ CLAUDE_CONFIG_DIR = "{claude_dir}" }}\n'
        f'[runtimes.codex]\ncommand = "{codex}"\nenv = {{ CODEX_HOME = "{codex_home}" }}\n'
    )


def doctor(d: DaemonProcess, **env: str) -> tuple[int, dict[str, dict[str, Any]], str]:
    done = d.cli("doctor", "--json", extra_env=env)
    checks = {c["name"]: c for c in json.loads(done.stdout)["checks"]}
    human = d.cli("doctor", extra_env=env)
    assert human.returncode == done.returncode, human.stderr
    return done.returncode, checks, human.stdout


def test_a_working_home_is_ok_line_by_line(start_alpd: StartAlpd, tmp_path: Path) -> None:
    d = start_alpd(
        config(tmp_path, codex_logged_in=True, claude_credentials=True), extra_env=NO_KEYS
    )
    code, checks, human = doctor(d)
    assert code == 0, human
    for name in ("daemon", "config", "socket", "disk", "runtime claude", "runtime codex",
                 "login claude", "login codex", "task scheduler", "task history-sync",
                 "task delivery", "web", "search", "alp in a login shell"):  # fmt: skip
        assert name in checks, (name, human)
    for name in ("daemon", "config", "socket", "disk", "runtime claude", "login claude",
                 "runtime codex", "login codex", "web"):  # fmt: skip
        assert checks[name]["status"] == "ok", checks[name]
    assert ".credentials.json" in checks["login claude"]["detail"]
    assert "Logged in using ChatGPT" in checks["login codex"]["detail"]
    assert "is valid" in checks["config"]["detail"]
    assert "mode 0600" in checks["socket"]["detail"]
    assert checks["web"]["detail"].startswith("off")
    assert checks["alp for runs"]["status"] in ("ok", "warn")
    assert "ALP_BIN=" in checks["alp for runs"]["detail"]
    assert human.splitlines()[0].startswith("ok    daemon")


def test_each_broken_part_is_named_with_its_fix(start_alpd: StartAlpd, tmp_path: Path) -> None:
    text = config(tmp_path, codex_logged_in=False, claude_credentials=False)
    text = text.replace(f"{tmp_path / 'codex'}", "/nonexistent/codex")
    text += '[agents.reviewer]\nruntime = "codex"\n'
    d = start_alpd(text, extra_env={**NO_KEYS, "ALP_DOCTOR_MIN_FREE_BYTES": str(10**18)})
    (tmp_path / "config.toml").write_text(text + "[agents.broken\n")
    d.socket_path.chmod(0o666)
    try:
        code, checks, human = doctor(d)
    finally:
        d.socket_path.chmod(0o600)
    assert code == 1, human
    assert checks["config"]["status"] == "fail"
    broken_line = text.count("\n") + 1
    assert f"{tmp_path / 'config.toml'}:{broken_line}:" in checks["config"]["detail"]
    assert "alp daemon reload" in checks["config"]["fix"]
    assert checks["runtime codex"]["status"] == "fail"
    assert "agents use it: reviewer" in checks["runtime codex"]["detail"]
    assert "npm install -g @openai/codex" in checks["runtime codex"]["fix"]
    assert "login codex" not in checks  # nothing to ask a program that is not there
    assert checks["login claude"]["status"] == "warn"
    assert "/login" in checks["login claude"]["fix"]
    assert checks["disk"]["status"] == "warn"
    assert "free some space" in checks["disk"]["fix"]
    assert checks["socket"]["status"] == "warn"
    assert "chmod 600" in checks["socket"]["fix"]
    assert "→ fix that line" in human
    assert human.splitlines()[-1].startswith("2 failing")
    # the running daemon kept the config it read: the agent is still there
    assert d.cli("daemon", "reload").returncode == 1


def test_codex_not_logged_in_warns(start_alpd: StartAlpd, tmp_path: Path) -> None:
    d = start_alpd(
        config(tmp_path, codex_logged_in=False, claude_credentials=True), extra_env=NO_KEYS
    )
    code, checks, human = doctor(d)
    assert code == 0, human
    assert checks["login codex"]["status"] == "warn"
    assert "codex login" in checks["login codex"]["fix"]
    code, checks, _ = doctor(d, OPENAI_API_KEY="unused")
    assert checks["login codex"]["status"] == "warn"  # the client's env is not the runs'


def test_no_daemon_is_the_first_failure(d: DaemonProcess, tmp_path: Path) -> None:
    gone = tmp_path / "nothing.sock"
    done = d.cli("doctor", extra_env={"ALP_SOCKET": str(gone)})
    assert done.returncode == 1, done.stderr
    first, fix = done.stdout.splitlines()[:2]
    assert first.startswith("fail  daemon") and str(gone) in first
    assert "alpd --socket" in fix
    assert "alp in a login shell" in done.stdout
    assert not gone.exists()  # doctor starts no daemon
    assert stat.S_ISSOCK(os.stat(d.socket_path).st_mode)
