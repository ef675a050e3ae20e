"""Live items of `thread/transcript` on a real alpd: a stand-in `claude` (as in
tests/integration/conversation/test_ps_live_cost.py) writes a Claude Code transcript one
line at a time, each when the test asks; a subscriber gets each new item within about a
second of its line being written (the history sync copies a running root every second),
in order, none lost — what the notifications carried is what a page read after returns."""

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
from daemons import settled

from alpctl.client import Client
from alpd.testing.daemon import DaemonProcess, running_daemon

LINES = 8
#: how long one line may take to reach the subscriber: the sync's 1 s interval, its copy, the
#: notification, with room for a loaded 2-core machine
WITHIN = 2.5

FAKE_CLAUDE = """#!{python}
import json, os, re, sys, time, uuid
from pathlib import Path
args = sys.argv[1:]
session = args[args.index("--session-id") + 1]
folder = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / re.sub(
    r"[^A-Za-z0-9]", "-", os.path.realpath(os.getcwd()))
folder.mkdir(parents=True, exist_ok=True)
transcript = folder / (session + ".jsonl")
for n in range(1, {lines} + 1):
    while not Path("go-%d" % n).exists():
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
    fake.write_text(FAKE_CLAUDE.format(python=sys.executable, lines=LINES))
    fake.chmod(0o755)
    config = tmp_path / "config.toml"
    config.write_text(f"[runtimes.claude]\ncommand = {json.dumps(str(fake))}\n")
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude-config")}
    with running_daemon(tmp_path, extra_env=env, extra_args=["--config", str(config)]) as daemon:
        yield daemon


def listen(client: Client, into: queue.Queue[tuple[float, dict[str, Any]]]) -> None:
    try:
        for note in client.notifications():
            if note.get("method") == "thread/transcript":
                for item in note["params"]["items"]:
                    into.put((time.monotonic(), item))
    except Exception:  # the connection closed at the end of the test
        return


def test_a_running_roots_lines_reach_a_subscriber_within_a_second_or_so_none_lost(
    d: DaemonProcess, work: Path
) -> None:
    thread = d.call("thread/create", {"title": "live", "cwd": str(work)})
    tid = thread["id"]
    watcher = Client.connect(d.socket_path)
    watcher.call("events/subscribe", {"events": ["thread/transcript"], "threadId": tid})
    arrived: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
    threading.Thread(target=listen, args=(watcher, arrived), daemon=True).start()
    started = d.call("thread/continue", {"threadId": tid, "runtime": "claude", "headless": True,
                                         "cwd": str(work), "prompt": "work"})  # fmt: skip
    execution_id = started["execution"]["id"]
    seen: dict[str, dict[str, Any]] = {}
    delays = []
    try:
        for n in range(1, LINES + 1):
            asked = time.monotonic()
            (work / f"go-{n}").touch()
            while True:
                at, item = arrived.get(timeout=WITHIN * 2)
                seen.setdefault(item["cursor"], item)
                if item.get("text") == f"step {n}":
                    delays.append(at - asked)
                    break
    finally:
        for n in range(1, LINES + 1):
            (work / f"go-{n}").touch()
    print("delays (s):", [round(x, 2) for x in delays])
    assert max(delays) < WITHIN, delays
    settled(d, execution_id)
    replies = [i for i in seen.values() if i["type"] == "reply"]
    assert [i["text"] for i in replies] == [f"step {n}" for n in range(1, LINES + 1)]
    page = d.call("thread/transcript", {"threadId": tid, "after": "", "limit": 500})
    for item in page["items"]:
        if item["type"] == "reply":
            assert seen[item["cursor"]]["text"] == item["text"]
    watcher.close()
