"""A thread whose root still runs cannot be closed under it."""

from __future__ import annotations

from pathlib import Path

import pytest

from alpctl.client import RpcError
from alpd.testing.daemon import running_daemon

pytestmark = pytest.mark.both_stores


def test_closing_a_thread_with_a_running_root_is_thread_busy(
    tmp_path: Path, store_url: str | None
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    store_env = {"ALP_STORE_URL": store_url} if store_url else {}
    with running_daemon(tmp_path, extra_env=store_env) as d, d.client() as client:
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
