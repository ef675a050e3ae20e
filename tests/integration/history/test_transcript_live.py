"""Live items of `thread/transcript` on a real alpd: a stand-in `claude` (as in
tests/integration/conversation/test_ps_live_cost.py) writes a Claude Code transcript one
line at a time, each when the test asks; a subscriber gets each new item within a few
seconds of its line being written (the history sync copies a running root every second),
in order, none lost — what the notifications carried is what a page read after returns. A
pushed root's report (a root nobody watched) comes the same way once it is written.

Nothing here can wait for ever: every call goes over a connection whose reads give up after
`CALL_TIMEOUT`, each line is waited for at most `LINE_DEADLINE`, the whole test at most
`TEST_DEADLINE` (well under pytest's 300 s), and the stand-in gives up on its own when
nobody asks for its next line."""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from alpctl.client import Client
from alpd.testing.daemon import DaemonProcess, running_daemon

LINES = 8
#: how long one line may take to reach the subscriber: the sync's 1 s interval, its copy, the
#: notification, with room for a loaded 2-core machine (about 1 s here)
WITHIN = 5.0
#: how long the test waits for one line before it fails (saying which)
LINE_DEADLINE = 15.0
#: every wait of the test together
TEST_DEADLINE = 120.0
#: a socket read of the test's connections
CALL_TIMEOUT = 20.0

ECHO = """
[agents.echo]
runtime = "command"
args = ["sh", "-c", "cat; echo done"]
"""

FAKE_CLAUDE = """#!{python}
import json, os, re, sys, time, uuid
from pathlib import Path
args = sys.argv[1:]
session = args[args.index("--session-id") + 1]
folder = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / re.sub(
    r"[^A-Za-z0-9]", "-", os.path.realpath(os.getcwd()))
folder.mkdir(parents=True, exist_ok=True)
transcript = folder / (session + ".jsonl")
give_up = time.monotonic() + {give_up}
for n in range(1, {lines} + 1):
    while not Path("go-%d" % n).exists():
        if time.monotonic() > give_up:
            sys.exit("nobody asked for line %d" % n)
        time.sleep(0.01)
    line = {{"type": "assistant", "uuid": str(uuid.uuid4()), "sessionId": session,
             "timestamp": "2026-11-30T05:00:%02d.000Z" % n,
             "message": {{"model": "stand-in",
                         "content": [{{"type": "text", "text": "step %d" % n}}]}}}}
    with transcript.open("a") as f:
        f.write(json.dumps(line) + "\\n")
"""


@pytest.fixture
def d(tmp_path: Path) -> Iterator[DaemonProcess]:
    fake = tmp_path / "claude"
    fake.write_text(FAKE_CLAUDE.format(python=sys.executable, lines=LINES, give_up=TEST_DEADLINE))
    fake.chmod(0o755)
    config = tmp_path / "config.toml"
    config.write_text(f"[runtimes.claude]\ncommand = {json.dumps(str(fake))}\n{ECHO}")
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude-config")}
    with running_daemon(tmp_path, extra_env=env, extra_args=["--config", str(config)]) as daemon:
        yield daemon


def call(d: DaemonProcess, method: str, params: dict[str, Any]) -> Any:
    with Client.connect(d.socket_path, timeout=CALL_TIMEOUT) as client:
        return client.call(method, params)


def listen(client: Client, into: queue.Queue[tuple[float, dict[str, Any]]]) -> None:
    try:
        for note in client.notifications():
            if note.get("method") == "thread/transcript":
                for item in note["params"]["items"]:
                    into.put((time.monotonic(), item))
    except Exception:  # the connection closed at the end of the test
        return


def settled(d: DaemonProcess, execution_id: str, deadline: float) -> None:
    while True:
        execution = call(d, "execution/wait", {"executionId": execution_id, "timeout": 2})
        if execution["status"] == "settled":
            return
        assert time.monotonic() < deadline, f"{execution_id} did not settle\n{d.log_text()}"


def test_a_running_roots_lines_reach_a_subscriber_within_seconds_none_lost(
    d: DaemonProcess, work: Path
) -> None:
    deadline = time.monotonic() + TEST_DEADLINE
    tid = call(d, "thread/create", {"title": "live", "cwd": str(work)})["id"]
    # The listener waits for notifications as long as the whole test may last (a daemon
    # thread; closing its connection at the end ends it sooner).
    watcher = Client.connect(d.socket_path, timeout=TEST_DEADLINE)
    watcher.call("events/subscribe", {"events": ["thread/transcript"], "threadId": tid})
    arrived: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
    threading.Thread(target=listen, args=(watcher, arrived), daemon=True).start()
    started = call(d, "thread/continue", {"threadId": tid, "runtime": "claude", "headless": True,
                                          "cwd": str(work), "prompt": "work"})  # fmt: skip
    execution_id = started["execution"]["id"]
    seen: dict[str, dict[str, Any]] = {}
    delays: list[float] = []
    try:
        for n in range(1, LINES + 1):
            asked = time.monotonic()
            (work / f"go-{n}").touch()
            give_up = min(asked + LINE_DEADLINE, deadline)
            while True:
                left = give_up - time.monotonic()
                try:
                    at, item = arrived.get(timeout=max(left, 0.01))
                except queue.Empty:
                    pytest.fail(
                        f"line {n} did not reach the subscriber within {LINE_DEADLINE} s "
                        f"(got {sorted(i.get('text', '') for i in seen.values())}; delays "
                        f"{delays})\n{d.log_text()}"
                    )
                seen.setdefault(item["cursor"], item)
                if item.get("text") == f"step {n}":
                    delays.append(at - asked)
                    break
    finally:
        for n in range(1, LINES + 1):
            (work / f"go-{n}").touch()
        watcher.close()
    print("delays (s):", [round(x, 2) for x in delays])
    assert max(delays) < WITHIN, delays
    settled(d, execution_id, deadline)
    replies = [i for i in seen.values() if i["type"] == "reply"]
    assert [i["text"] for i in replies] == [f"step {n}" for n in range(1, LINES + 1)]
    page = call(d, "thread/transcript", {"threadId": tid, "after": "", "limit": 500})
    for item in page["items"]:
        if item["type"] == "reply":
            assert seen[item["cursor"]]["text"] == item["text"]


def test_a_pushed_roots_report_reaches_a_subscriber(d: DaemonProcess, work: Path) -> None:
    deadline = time.monotonic() + TEST_DEADLINE
    tid = call(d, "thread/create", {"title": "pushed", "cwd": str(work)})["id"]
    watcher = Client.connect(d.socket_path, timeout=TEST_DEADLINE)
    watcher.call("events/subscribe", {"events": ["thread/transcript"], "threadId": tid})
    arrived: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
    threading.Thread(target=listen, args=(watcher, arrived), daemon=True).start()
    try:
        call(d, "thread/push", {"threadId": tid, "text": "one more", "source": "test",
                                "agent": "echo"})  # fmt: skip
        while True:
            try:
                _, item = arrived.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                pytest.fail(f"no report reached the subscriber\n{d.log_text()}")
            if item["type"] == "report":
                break
    finally:
        watcher.close()
    assert item["status"] == "completed"
    assert "done" in item["text"]
    page = call(d, "thread/transcript", {"threadId": tid, "limit": 50})
    assert [i for i in page["items"] if i["type"] == "report"] == [item]
