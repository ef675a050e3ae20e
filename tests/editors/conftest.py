"""Fixtures for the editor clients (Neovim, VS Code) and the OpenRPC tooling check.

They need programs outside Python: `nvim` (Debian's `neovim`), `node`, and the npm packages
under editors/vscode/node_modules. `make test` installs them (`make editors`); without them
these tests are skipped with the reason. They are marked `editors`, so under ``CI=true`` the
skip is a failure instead (tests/ci_gate.py): a CI run that skips them proves nothing.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from polling import wait_for

from alpd.testing.daemon import DaemonProcess, running_daemon

REPO = Path(__file__).resolve().parents[2]
VSCODE = REPO / "editors" / "vscode"
NODE_MODULES = VSCODE / "node_modules"
NVIM_PLUGIN = REPO / "editors" / "nvim"


def _skip(reason: str) -> None:
    pytest.skip(f"{reason} (run `make editors`)")


@pytest.fixture(scope="module")
def node_modules_ready() -> None:
    if not (NODE_MODULES / ".package-lock.json").exists():
        _skip("editors/vscode/node_modules is not installed")


@pytest.fixture
def node(node_modules_ready: None) -> str:
    found = shutil.which("node")
    if found is None:
        _skip("node is not on PATH")
    assert found is not None
    return found


@pytest.fixture
def nvim() -> str:
    found = shutil.which("nvim")
    if found is None:
        _skip("nvim is not on PATH (apt-get install neovim)")
    assert found is not None
    return found


@dataclass
class SeededDaemon:
    """A real alpd with one thread whose first run pinned a decision and settled."""

    daemon: DaemonProcess
    work: Path
    thread_id: str
    execution_id: str


@pytest.fixture
def seeded(tmp_path: Path) -> Iterator[SeededDaemon]:
    work = tmp_path / "work"
    work.mkdir()
    with running_daemon(tmp_path) as daemon:
        done = daemon.cli(
            "--title", "planning the ledger", "--runtime", "command", "--headless", "--wait",
            "--json", "--", "sh", "-c", f"alp context pin decision -- {DECISION}",
            cwd=str(work),
        )  # fmt: skip
        assert done.returncode == 0, (done.stdout, done.stderr, daemon.log_text())
        result = json.loads(done.stdout)
        # A title reaches the search index with the history sync's next pass, not with the
        # create; the plugin searches once, so it must not ask before that pass.
        wait_for(lambda: _search_hits(daemon, "ledger"), what="the title indexed")
        yield SeededDaemon(daemon, work, result["thread"]["id"], result["execution"]["id"])


def _search_hits(daemon: DaemonProcess, query: str) -> list[object]:
    done = daemon.cli("search", query, "--json")
    assert done.returncode == 0, done.stderr
    hits: list[object] = json.loads(done.stdout)["hits"]
    return hits


DECISION = "keep the ledger in sqlite"


FIXTURES = REPO / "tests" / "fixtures" / "runtimes"
#: an imported Claude Code session of tests/fixtures/runtimes: prompts, replies, tool calls
CLAUDE_SESSION = "4a3bca85-6ad3-4d20-b8bb-637e07fbaa03"
MEMORY = "prices are stored in cents"


@dataclass
class ViewsDaemon:
    """A real alpd for the transcript, memory and diff views: a thread whose root pinned a
    decision, changed `a.txt` and created `b.txt` (file checkpoints before and after), a
    memory of its workspace, and a thread adopted from an imported Claude Code session."""

    daemon: DaemonProcess
    work: Path
    thread_id: str
    execution_id: str
    adopted_id: str
    memory_id: str


@pytest.fixture
def views(tmp_path: Path) -> Iterator[ViewsDaemon]:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("one\n")
    with running_daemon(tmp_path) as daemon:
        script = f"alp context pin decision -- {DECISION} && echo two >> a.txt && echo new > b.txt"
        done = daemon.cli(
            "--title", "planning the ledger", "--runtime", "command", "--headless", "--wait",
            "--json", "--", "sh", "-c", script, cwd=str(work),
        )  # fmt: skip
        assert done.returncode == 0, (done.stdout, done.stderr, daemon.log_text())
        result = json.loads(done.stdout)
        sessions = tmp_path / "claude-sessions"
        shutil.copytree(FIXTURES / "claude", sessions)
        daemon.call("history/import", {"runtime": "claude", "path": str(sessions)})
        adopted = daemon.call("thread/adopt", {"sessionId": CLAUDE_SESSION})
        memory = daemon.call("memory/add", {"text": MEMORY, "cwd": str(work)})
        assert isinstance(adopted, dict) and isinstance(memory, dict)
        yield ViewsDaemon(
            daemon, work, result["thread"]["id"], result["execution"]["id"],
            adopted["threadId"], memory["id"],
        )  # fmt: skip
