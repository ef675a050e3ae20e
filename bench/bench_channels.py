"""The Telegram door against the fake Bot API (tests/fake_telegram.py), on a real alpd.

- Latency (issue 23, "Measured"): a message put in the fake server → the chat thread's new
  root exists (polled every 2 ms over the socket), p50 of `LATENCY_ROUNDS`; the root settled
  (its `settledAt`) → the answer received by the fake, p50. Floor, same run: the same turn
  through `thread/say` on the socket (the chat door's own path, without Telegram). Goals:
  under 1 s each.
- 1,000 strangers: none handled (nothing sent to them, no root); the CPU alpd spent on them;
  its idle CPU (5 s) and RSS after the flood against before it.
- A burst of 100 messages to one thread: every message in the roots' prompts exactly once,
  in order (the agent prints its prompt).

Runs the checkout's alpd on a temporary home; the fake server runs in this process.
"""

from __future__ import annotations

import re
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import psutil

from alpd.supervisor.supervisor import STDOUT_FILE
from alpd.testing.daemon import DaemonProcess, running_daemon
from bench import Result

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from fake_telegram import FakeBotApi, fake_bot_api

LATENCY_ROUNDS = 15
STRANGERS = 1000
BURST = 100
IDLE_SECONDS = 5.0
OWNER = 4242
TOKEN = "123456:bench-token-AAAAAAAAAAAAAAAAAAAAAAAAAAAA"

CONFIG = """
[agents.echo]
runtime = "command"
args = ["sh", "-c", "cat"]

[channels]
per_minute = 600

[channels.telegram]
token_file = "{token_file}"
api_url = "{api_url}"
"""


def wait(check: Any, timeout: float = 60.0, interval: float = 0.002) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {check}")
        time.sleep(interval)


def roots(d: DaemonProcess, thread_id: str) -> list[dict[str, Any]]:
    shown = d.call("thread/show", {"threadId": thread_id})
    assert isinstance(shown, dict)
    return list(shown["roots"])


def idle(d: DaemonProcess, thread_id: str) -> bool:
    return all(r["status"] == "settled" for r in roots(d, thread_id))


def wall(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def setup(d: DaemonProcess, api: FakeBotApi, work: Path) -> str:
    wait(lambda: _state(d) == "polling")
    code = d.call("channel/pair", {"channel": "telegram"})
    assert isinstance(code, dict)
    api.user_says(OWNER, code["code"])
    api.wait_sent(lambda s: "Paired" in s["text"])
    thread = d.call("thread/create", {"title": "ops", "cwd": str(work)})
    assert isinstance(thread, dict)
    first = d.call(
        "thread/continue",
        {
            "threadId": thread["id"],
            "agent": "echo",
            "headless": True,
            "cwd": str(work),
            "prompt": "hi",
        },
    )
    assert isinstance(first, dict)
    d.call("execution/wait", {"executionId": first["execution"]["id"], "timeout": 30})
    api.user_says(OWNER, "/use ops")
    api.wait_sent(lambda s: "▶ ops" in s["text"])
    return str(thread["id"])


def _state(d: DaemonProcess) -> str:
    listed = d.call("channel/list", {})
    assert isinstance(listed, dict)
    return str(next(c for c in listed["channels"] if c["channel"] == "telegram")["state"])


def latency(d: DaemonProcess, api: FakeBotApi, thread_id: str) -> list[Result]:
    offset = time.time() - time.monotonic()
    to_root: list[float] = []
    to_answer: list[float] = []
    direct: list[float] = []
    for n in range(LATENCY_ROUNDS):
        for via_chat in (n % 2 == 0, n % 2 != 0):  # interleaved, alternating first
            count = len(roots(d, thread_id))
            marker = f"lat-{n}-{'chat' if via_chat else 'socket'}"
            started = time.monotonic()
            if via_chat:
                api.user_says(OWNER, marker)
            else:
                d.call("thread/say", {"threadId": thread_id, "text": marker})
            wait(lambda count=count: len(roots(d, thread_id)) > count)
            (to_root if via_chat else direct).append((time.monotonic() - started) * 1000)
            root = wait(lambda: (r := roots(d, thread_id)[-1])["status"] == "settled" and r)
            if via_chat:
                answer = api.wait_sent(lambda s, marker=marker: marker in s["text"])
                settled = wall(root["settledAt"])
                to_answer.append((answer["at"] + offset - settled) * 1000)
    root_p50, direct_p50 = statistics.median(to_root), statistics.median(direct)
    answer_p50 = statistics.median(to_answer)
    return [
        Result(
            "chat message → new root p50 vs thread/say on the socket",
            root_p50,
            "ms",
            direct_p50,
            root_p50 / direct_p50,
            "",
        ),
        Result(
            "chat message → new root p50 vs 1 s", root_p50, "ms", 1000.0, root_p50 / 1000, "<= 1"
        ),
        Result(
            "root settled → answer in the chat p50 vs 1 s",
            answer_p50,
            "ms",
            1000.0,
            answer_p50 / 1000,
            "<= 1",
        ),
    ]


def cpu_seconds(pid: int) -> float:
    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


def idle_cpu(pid: int, seconds: float = IDLE_SECONDS) -> float:
    cpu = cpu_seconds(pid)
    time.sleep(seconds)
    return (cpu_seconds(pid) - cpu) / seconds * 100


def strangers(d: DaemonProcess, api: FakeBotApi, thread_id: str) -> list[Result]:
    process = psutil.Process(d.pid)
    count = len(roots(d, thread_id))
    rss_before = process.memory_info().rss
    before = idle_cpu(d.pid)
    cpu = cpu_seconds(d.pid)
    for n in range(STRANGERS):
        api.user_says(100_000 + n, f"hello {n}")
    wait(lambda: api.pending() == 0 and api.offsets[-1] == api.next_update, 120, 0.01)
    flood = cpu_seconds(d.pid) - cpu
    after = idle_cpu(d.pid)
    rss_after = process.memory_info().rss
    handled = sum(1 for s in api.sent if s["chat_id"] >= 100_000)
    if handled or len(roots(d, thread_id)) != count:
        raise RuntimeError(f"strangers were handled: {handled} replies")
    return [
        Result(
            f"alpd CPU for {STRANGERS} strangers (none handled)", flood * 1000, "ms", None, None, ""
        ),
        Result(
            f"alpd idle CPU after {STRANGERS} strangers vs before ({IDLE_SECONDS:.0f} s)",
            after,
            "% core",
            before,
            after / before if before else None,
            "",
        ),
        Result(
            f"alpd RSS after {STRANGERS} strangers vs before",
            rss_after / 2**20,
            "MiB",
            rss_before / 2**20,
            rss_after / rss_before,
            "<= 1.05",
        ),
    ]


def burst(d: DaemonProcess, api: FakeBotApi, thread_id: str, home: Path) -> list[Result]:
    wait(lambda: idle(d, thread_id))
    before = len(roots(d, thread_id))
    started = time.monotonic()
    for n in range(BURST):
        api.user_says(OWNER, f"burst-{n:03d}")
    seen: list[int] = []

    def delivered() -> bool:
        seen.clear()
        for root in roots(d, thread_id)[before:]:
            if root["status"] != "settled":
                return False
            out = (home / "executions" / root["id"] / STDOUT_FILE).read_text()
            seen.extend(int(m) for m in re.findall(r"burst-(\d{3})", out))
        return len(set(seen)) >= BURST

    wait(delivered, 180, 0.05)
    span = time.monotonic() - started
    if seen != list(range(BURST)):
        raise RuntimeError(f"out of order or twice: {seen}")
    made = len(roots(d, thread_id)) - before
    return [
        Result(
            f"{BURST} chat messages to one thread: all in order, once ({made} roots)",
            span,
            "s",
            None,
            None,
            "",
        ),
    ]


def run() -> list[Result]:
    with tempfile.TemporaryDirectory(prefix="alp-bench-") as scratch, fake_bot_api(TOKEN) as api:
        base = Path(scratch)
        home, work = base / "home", base / "work"
        home.mkdir(mode=0o700)
        work.mkdir()
        token_file = base / "telegram.token"
        token_file.write_text(TOKEN)
        token_file.chmod(0o600)
        (home / "config.toml").write_text(CONFIG.format(token_file=token_file, api_url=api.url))
        with running_daemon(base) as d:
            thread_id = setup(d, api, work)
            results = latency(d, api, thread_id)
            results += strangers(d, api, thread_id)
            results += burst(d, api, thread_id, d.home)
    return results
