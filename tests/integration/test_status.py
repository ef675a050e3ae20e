"""`daemon/status` counts what the daemon holds."""

from __future__ import annotations

from pathlib import Path

from alpd.testing.daemon import running_daemon


def test_status_counts_threads_executions_and_running_roots(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with running_daemon(tmp_path) as d, d.client() as client:
        thread = client.call("thread/create", {"title": "t", "cwd": str(work)})
        client.call("thread/create", {"title": "u", "cwd": str(work)})
        started = client.call(
            "thread/continue",
            {"threadId": thread["id"], "runtime": "command", "headless": True,
             "args": ["sleep", "30"], "cwd": str(work)},
        )  # fmt: skip
        status = client.call("daemon/status")
        assert status["counts"]["threads"] == 2
        assert status["counts"]["openThreads"] == 2
        assert status["counts"]["executions"] == 1
        assert status["counts"]["running"] == 1
        assert status["counts"].get("historyEntries", 0) == 0
        client.call("execution/cancel", {"executionId": started["execution"]["id"]})
        assert client.call("daemon/status")["counts"].get("running", 0) == 0
