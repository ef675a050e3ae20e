"""`alp ps` shows the cost of a running job as it accrues (issue 21, point 25): the history
sync reads a running root's transcript while it runs, so each model response the run has
had is in its cost before it settles. A stand-in `claude` writes a Claude Code transcript
one response at a time; its usage is priced by `[runtimes.claude] prices`."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from daemons import settled
from polling import wait_for

from alpd.testing.daemon import DaemonProcess, running_daemon

FAKE_CLAUDE = """#!{python}
import json, os, re, sys, time, uuid
from pathlib import Path
args = sys.argv[1:]
session = args[args.index("--session-id") + 1]
folder = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / re.sub(
    r"[^A-Za-z0-9]", "-", os.path.realpath(os.getcwd()))
folder.mkdir(parents=True, exist_ok=True)
transcript = folder / (session + ".jsonl")
def response(n):
    line = {{"type": "assistant", "uuid": str(uuid.uuid4()), "sessionId": session,
             "timestamp": "2026-11-30T05:00:0%d.000Z" % n,
             "message": {{"model": "stand-in",
                         "content": [{{"type": "text", "text": "step %d" % n}}],
                         "usage": {{"input_tokens": 1000, "output_tokens": 100}}}}}}
    with transcript.open("a") as f:
        f.write(json.dumps(line) + "\\n")
response(1)
while not Path("more").exists():
    time.sleep(0.02)
response(2)
while not Path("done").exists():
    time.sleep(0.02)
"""

#: USD per million tokens: one response (1000 in, 100 out) costs 0.002 + 0.001
PRICES = (
    "[runtimes.claude]\ncommand = {command}\n"
    'prices = {{ "stand-in" = {{ input = 2.0, output = 10.0 }} }}\n'
)
ONE_RESPONSE = 1000 * 2.0 / 1e6 + 100 * 10.0 / 1e6


@pytest.fixture
def d(tmp_path: Path) -> Iterator[DaemonProcess]:
    fake = tmp_path / "claude"
    fake.write_text(FAKE_CLAUDE.format(python=sys.executable))
    fake.chmod(0o755)
    config = tmp_path / "config.toml"
    config.write_text(PRICES.format(command=json.dumps(str(fake))))
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude-config")}
    with running_daemon(tmp_path, extra_env=env, extra_args=["--config", str(config)]) as daemon:
        yield daemon


@pytest.fixture
def work(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "work"
    path.mkdir(exist_ok=True)
    try:
        yield path
    finally:
        (path / "more").touch()
        (path / "done").touch()


def job_cost(d: DaemonProcess, execution_id: str) -> float | None:
    ps: Any = d.call("daemon/ps", {})
    jobs = [job for job in ps["jobs"] if job["executionId"] == execution_id]
    return jobs[0].get("costUsd") if jobs else None


def test_ps_shows_a_running_jobs_cost_as_each_response_of_its_transcript_arrives(
    d: DaemonProcess, work: Path
) -> None:
    thread: Any = d.call("thread/create", {"title": "costly", "cwd": str(work)})
    started: Any = d.call(
        "thread/continue",
        {"threadId": thread["id"], "runtime": "claude", "headless": True, "cwd": str(work),
         "prompt": "work"},
    )  # fmt: skip
    execution_id = started["execution"]["id"]
    wait_for(lambda: job_cost(d, execution_id) == pytest.approx(ONE_RESPONSE), what="cost 1")
    (work / "more").touch()
    wait_for(lambda: job_cost(d, execution_id) == pytest.approx(2 * ONE_RESPONSE), what="cost 2")
    ps: Any = d.call("daemon/ps", {})
    assert ps["costUsd"] == pytest.approx(2 * ONE_RESPONSE)
    (work / "done").touch()
    assert settled(d, execution_id)["costUsd"] == pytest.approx(2 * ONE_RESPONSE)


def leftovers(d: DaemonProcess) -> list[Any]:
    ps: Any = d.call("daemon/ps", {})
    return list(ps.get("leftovers", []))


def test_ps_shows_the_processes_a_run_left_behind_and_alpds_own_services(
    d: DaemonProcess, work: Path
) -> None:
    thread: Any = d.call("thread/create", {"title": "messy", "cwd": str(work)})
    # The run starts a process in a session of its own and ends without waiting for it.
    script = "setsid sleep 300 < /dev/null > /dev/null 2>&1 & echo $! > left.pid"
    started: Any = d.call(
        "thread/continue",
        {"threadId": thread["id"], "runtime": "command", "headless": True, "cwd": str(work),
         "args": ["sh", "-c", script]},
    )  # fmt: skip
    execution_id = started["execution"]["id"]
    assert settled(d, execution_id)["outcome"] == "completed"
    left = int((work / "left.pid").read_text())
    try:
        ps: Any = d.call("daemon/ps", {})
        assert [(x["executionId"], x["pid"], x["outcome"]) for x in ps["leftovers"]] == [
            (execution_id, left, "completed")
        ]
        assert "sleep 300" in ps["leftovers"][0]["command"]
        services = {task["name"]: task for task in ps["services"]}
        assert services["web"]["state"] == "off"
        assert services["transcript-reader"]["state"] in ("running", "stopped")
        opened: Any = d.call("web/open", {})
        ps = d.call("daemon/ps", {})
        services = {task["name"]: task for task in ps["services"]}
        assert services["web"]["state"] == "serving"
        assert opened["url"].startswith(services["web"]["detail"])
        shown = d.cli("ps")
        assert shown.returncode == 0, shown.stderr
        assert "LEFT BEHIND 1" in shown.stdout and f"pid {left}" in shown.stdout
        assert "transcript-reader" in shown.stdout and "web" in shown.stdout
    finally:
        os.kill(left, signal.SIGKILL)
    # Once it is gone, nothing is left behind.
    wait_for(lambda: not leftovers(d), what="no leftovers")
