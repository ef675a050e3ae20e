"""`thread/transcript` on a real alpd: a thread's roots (the `command` runtime), pushes, a
clear and an undo, read in order and paged both ways; live items while a root runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from daemons import StartAlpd, roots
from polling import wait_for

from alpctl.client import RpcError
from alpd.testing.daemon import DaemonProcess

CONFIG = """
[agents.echo]
runtime = "command"
args = ["sh", "-c", "cat; echo done"]
"""


@pytest.fixture
def d(start_alpd: StartAlpd) -> DaemonProcess:
    return start_alpd(CONFIG)


def settled(d: DaemonProcess, thread_id: str, count: int) -> bool:
    rs = roots(d, thread_id)
    return len(rs) == count and all(r["status"] == "settled" for r in rs)


def transcript(d: DaemonProcess, thread_id: str, **params: Any) -> dict[str, Any]:
    result = d.call("thread/transcript", {"threadId": thread_id, **params})
    assert isinstance(result, dict)
    return result


def walk(d: DaemonProcess, thread_id: str, limit: int, backward: bool) -> list[str]:
    """Every item's cursor, walking pages of `limit` from one end to the other."""
    seen: list[str] = []
    page = transcript(d, thread_id, limit=limit, **({} if backward else {"after": ""}))
    while True:
        cursors = [item["cursor"] for item in page["items"]]
        seen = cursors + seen if backward else seen + cursors
        if backward and not page.get("moreBefore"):
            return seen
        if not backward and not page.get("moreAfter"):
            return seen
        key = {"before": page["previous"]} if backward else {"after": page["next"]}
        page = transcript(d, thread_id, limit=limit, **key)


def test_pushes_roots_reports_and_a_clear_read_in_order_and_page_both_ways(
    d: DaemonProcess, work: Path
) -> None:
    thread = d.call("thread/create", {"title": "ops", "cwd": str(work)})
    tid = thread["id"]
    for i in range(3):
        d.call("thread/push", {"threadId": tid, "text": f"disk at 9{i}%", "source": "disk",
                               "agent": "echo"})  # fmt: skip
        wait_for(lambda i=i: settled(d, tid, i + 1), what="the push root")
        if i == 1:
            d.call("thread/clear", {"threadId": tid})

    def whole_with_three_reports() -> dict[str, Any] | None:
        page = transcript(d, tid, after="", limit=500)
        reports = [item for item in page["items"] if item["type"] == "report"]
        return page if len(reports) == 3 else None

    whole = wait_for(whole_with_three_reports, what="the third root's report in the transcript")
    types = [(item["type"], item.get("sequence")) for item in whole["items"]]
    assert types[:3] == [("root", 1), ("push", 1), ("report", 1)]
    assert ("clear", None) in types
    assert types.index(("clear", None)) == types.index(("root", 3)) - 1
    push = whole["items"][1]
    assert push["text"] == "disk at 90%" and push["source"] == "disk"
    assert push["envelope"].startswith('[alp · push from "disk"')
    report = whole["items"][2]
    assert report["status"] == "completed" and "done" in report["text"]
    assert "before-clear" in whole["items"][0]["labels"]
    assert {r["sequence"] for r in whole["roots"]} == {1, 2, 3}
    assert whole["roots"][0]["kind"] == "push" and whole["roots"][0]["origin"]["pushSource"]

    every = [item["cursor"] for item in whole["items"]]
    for limit in (1, 2, 3, 5):
        assert walk(d, tid, limit, backward=False) == every
        assert walk(d, tid, limit, backward=True) == every
    newest = transcript(d, tid, limit=2)
    assert [i["cursor"] for i in newest["items"]] == every[-2:]
    only_two = transcript(d, tid, after="", root=2)
    assert {i.get("sequence") for i in only_two["items"]} == {2, None}  # and the clear after it
    assert [i["type"] for i in only_two["items"]][-1] == "clear"


def test_a_bad_cursor_and_a_bad_limit_are_invalid_arguments(d: DaemonProcess, work: Path) -> None:
    tid = d.call("thread/create", {"cwd": str(work)})["id"]
    for params in ({"after": "nonsense"}, {"before": "t1.!!"}, {"limit": 0}, {"limit": 501}):
        with pytest.raises(RpcError) as caught:
            d.call("thread/transcript", {"threadId": tid, **params})
        assert caught.value.name == "INVALID_ARGUMENT"
    with pytest.raises(RpcError) as caught:
        d.call("thread/transcript", {"threadId": "thr_nope"})
    assert caught.value.name == "THREAD_NOT_FOUND"


def test_alp_thread_log_prints_the_conversation_without_json(d: DaemonProcess, work: Path) -> None:
    tid = d.call("thread/create", {"title": "log", "cwd": str(work)})["id"]
    d.call("thread/push", {"threadId": tid, "text": "rotate the logs", "source": "cron",
                           "agent": "echo"})  # fmt: skip
    wait_for(lambda: settled(d, tid, 1), what="the push root")
    done = d.cli("thread", "log", tid)
    assert done.returncode == 0, done.stderr
    assert "root #1" in done.stdout and "push from cron" in done.stdout
    assert "rotate the logs" in done.stdout and "report (completed)" in done.stdout
    assert "{" not in done.stdout and "\x1b[" not in done.stdout
    raw = d.cli("thread", "log", tid, "--raw")
    assert all(line.startswith("{") for line in raw.stdout.splitlines())
