"""The workspace belongs to the thread (issue 22, point 5), and a continue without --agent
reuses the thread's last agent, a bare --headless is a usage error (point 6)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from daemons import StartAlpd, cli_json, roots, settled

from alpd.testing.daemon import DaemonProcess

CONFIG = """
[agents.where]
runtime = "command"
args = ["sh", "-c", "pwd >> $HOME_LOG"]
"""


@pytest.fixture
def d(start_alpd: StartAlpd, tmp_path: Path) -> DaemonProcess:
    return start_alpd(
        CONFIG.replace("$HOME_LOG", str(tmp_path / "where.log")),
    )


def test_a_root_run_elsewhere_moves_no_later_run(
    d: DaemonProcess, work: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    log = tmp_path / "where.log"
    thread: Any = d.call("thread/create", {"title": "app", "cwd": str(work)})
    # From another directory, without --cwd: the run is in the thread's workspace, and says so
    done = d.cli(
        "thread", "continue", "app", "--agent", "where", "--headless", "--wait", "--prompt", "x",
        cwd=str(elsewhere),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"runs in {work}, the thread's workspace" in done.stderr
    # With --cwd: this root runs there, as it says ...
    done = d.cli(
        "thread", "continue", "app", "--headless", "--wait", "--cwd", ".", "--prompt", "x",
        cwd=str(elsewhere),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # ... and a push after it runs in the thread's workspace again, with the last agent
    pushed: Any = d.call("thread/push", {"threadId": thread["id"], "text": "t", "source": "ci"})
    settled(d, pushed["execution"]["id"])
    assert log.read_text().splitlines() == [str(work), str(elsewhere), str(work)]
    assert [r["agent"] for r in roots(d, thread["id"])] == ["where"] * 3


def test_a_bare_headless_is_a_usage_error(d: DaemonProcess, work: Path) -> None:
    d.call("thread/create", {"title": "app", "cwd": str(work)})
    done = d.cli("thread", "continue", "app", "--headless", cwd=str(work))
    assert done.returncode == 2
    assert "--headless needs --prompt" in done.stderr
    assert cli_json(d, "thread", "show", "app", cwd=work)["roots"] == []
