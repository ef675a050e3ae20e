"""Finding a Codex run's session: its output, the rollout it holds open, or the one rollout
of its cwd begun since it started."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from alpd.runtimes.base import FoundSession, RunFacts
from alpd.runtimes.codex import ADAPTER, rollouts_since

SESSION = "01a22b7a-4c16-7530-b95e-3240d090c930"
OTHER = "01a22b7a-4c16-7530-b95e-3240d090c931"


def _rollout(home: Path, session: str, cwd: str, started: float) -> Path:
    day = time.strftime("%Y/%m/%d", time.localtime(started))
    folder = home / "sessions" / day
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"rollout-2026-11-30T08-02-44-{session}.jsonl"
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(started))
    meta = {"type": "session_meta", "payload": {"id": session, "timestamp": stamp, "cwd": cwd}}
    path.write_text(json.dumps(meta) + "\n")
    return path


def _facts(tmp_path: Path, cwd: str, started: float, pid: int | None = None) -> RunFacts:
    exec_dir = tmp_path / "exec"
    exec_dir.mkdir(exist_ok=True)
    return RunFacts(
        exec_dir=exec_dir, env={"CODEX_HOME": str(tmp_path / "codex")}, cwd=cwd, pid=pid,
        started=started,
    )  # fmt: skip


def test_a_headless_run_is_found_by_its_thread_started_line(tmp_path: Path) -> None:
    now = time.time()
    path = _rollout(tmp_path / "codex", SESSION, str(tmp_path), now)
    facts = _facts(tmp_path, str(tmp_path), now)
    (facts.exec_dir / "stdout.log").write_text(
        json.dumps({"type": "thread.started", "thread_id": SESSION}) + "\n"
    )
    assert ADAPTER.discover_session(facts) == FoundSession(SESSION, str(path))


def test_an_ended_interactive_run_is_found_by_the_one_rollout_of_its_cwd(tmp_path: Path) -> None:
    work = str(tmp_path)
    now = time.time()
    path = _rollout(tmp_path / "codex", SESSION, work, now)
    _rollout(tmp_path / "codex", OTHER, "/somewhere/else", now)
    found = ADAPTER.discover_session(_facts(tmp_path, work, now - 1))
    assert found == FoundSession(SESSION, str(path), guessed=True)


def test_an_older_or_ambiguous_rollout_is_not_guessed(tmp_path: Path) -> None:
    work = str(tmp_path)
    old = _rollout(tmp_path / "codex", SESSION, work, time.time() - 3600)
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    assert ADAPTER.discover_session(_facts(tmp_path, work, time.time() - 5)) is None
    now = time.time()
    _rollout(tmp_path / "codex", SESSION, work, now)
    _rollout(tmp_path / "codex", OTHER, work, now)
    assert len(rollouts_since({"CODEX_HOME": str(tmp_path / "codex")}, work, now - 1)) == 2
    assert ADAPTER.discover_session(_facts(tmp_path, work, now - 1)) is None
