"""A thread whose root still runs cannot be closed under it."""

from __future__ import annotations

from pathlib import Path

import pytest

from alpctl.client import RpcError
from alpd.testing.daemon import running_daemon


def test_closing_a_thread_with_a_running_root_is_thread_busy(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with running_daemon(tmp_path) as d, d.client() as client:
        thread = client.call("thread/create", {"title": "t", "cwd": str(work)})
        started = client.call(
            "thread/continue",
            {"threadId": thread["id"], "runtime": "command", "headless": True,
             "args": ["sleep", "30"], "cwd": str(work)},
        )  # fmt: skip
        root = started["execution"]["id"]
        with pytest.raises(RpcError) as info:
            client.call("thread/close", {"threadId": thread["id"]})
        assert info.value.name == "THREAD_BUSY"
        assert info.value.data["busyRoot"] == root
        cancelled = client.call("execution/cancel", {"executionId": root})
        assert cancelled["outcome"] == "cancelled"
        closed = client.call("thread/close", {"threadId": thread["id"]})
        assert closed["status"] == "closed"
