"""A run's output reads as a conversation: `alp execution logs` and `--follow` render Claude's
stream-json (a stand-in runtime prints the real CLI's event shapes) as `alp thread log` does,
`--raw` keeps the JSONL as printed; a failed background run's report, its transcript item and
`alp activity` lead with the runtime's own error line (`Not logged in · Please run /login`)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from daemons import StartAlpd, roots
from polling import wait_for

from alpd.testing.daemon import DaemonProcess

NOT_LOGGED_IN = "Not logged in · Please run /login"
STREAM = [
    {"type": "system", "subtype": "init", "session_id": "s1", "tools": ["Bash", "Read"]},
    {"type": "assistant", "message": {"content": [{"type": "text", "text": "Hello there."}]}},
    {"type": "assistant", "message": {"content": [
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}},
    {"type": "user", "message": {"content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "README.md"}]}},
    {"type": "result", "subtype": "success", "is_error": False, "result": "Hello there.",
     "total_cost_usd": 0.0123},
]  # fmt: skip
FAILED = [
    STREAM[0],
    {"type": "assistant", "message": {"content": [{"type": "text", "text": NOT_LOGGED_IN}]}},
    {"type": "result", "subtype": "success", "is_error": True, "result": NOT_LOGGED_IN},
]
JSONL = "".join(json.dumps(event) + "\n" for event in STREAM)


def printer(tmp: Path, events: list[dict[str, object]], code: int) -> list[str]:
    """A stand-in runtime: prints `events` as stream-json and exits `code`."""
    path = tmp / f"stream-{code}.jsonl"
    path.write_text("".join(json.dumps(event) + "\n" for event in events))
    return ["sh", "-c", f"cat {shlex.quote(str(path))}; exit {code}"]


@pytest.fixture
def d(start_alpd: StartAlpd, tmp_path: Path) -> DaemonProcess:
    speaks = json.dumps(printer(tmp_path, STREAM, 0))
    fails = json.dumps(printer(tmp_path, FAILED, 1))
    return start_alpd(
        f'[agents.speaks]\nruntime = "command"\nargs = {speaks}\n\n'
        f'[agents.fails]\nruntime = "command"\nargs = {fails}\n'
    )


def no_json(text: str) -> bool:
    return not any(line.lstrip().startswith("{") for line in text.splitlines())


def test_execution_logs_render_the_stream_and_raw_keeps_the_jsonl(
    d: DaemonProcess, work: Path
) -> None:
    tid = d.call("thread/create", {"cwd": str(work)})["id"]
    started = d.call("thread/continue", {"threadId": tid, "agent": "speaks", "headless": True,
                                         "prompt": "hi", "cwd": str(work)})  # fmt: skip
    execution_id = started["execution"]["id"]
    d.call("execution/wait", {"executionId": execution_id, "timeout": 30})
    shown = d.cli("execution", "logs", execution_id)
    assert shown.returncode == 0, shown.stderr
    assert "assistant  Hello there." in shown.stdout
    assert "⚙ Bash" in shown.stdout and "README.md" in shown.stdout
    assert "$0.0123" in shown.stdout and no_json(shown.stdout)
    raw = d.cli("execution", "logs", execution_id, "--raw")
    assert raw.stdout == JSONL


def test_follow_renders_the_stream_as_it_comes_and_raw_keeps_it(
    d: DaemonProcess, work: Path
) -> None:
    tid = d.call("thread/create", {"cwd": str(work)})["id"]
    done = d.cli("thread", "continue", tid, "--agent", "speaks", "--headless", "--prompt", "hi",
                 "--follow", cwd=str(work))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "assistant  Hello there." in done.stdout and no_json(done.stdout)
    raw = d.cli("thread", "continue", tid, "--agent", "speaks", "--headless", "--prompt", "hi",
                "--follow", "--raw", cwd=str(work))  # fmt: skip
    assert raw.stdout.startswith(JSONL)


def test_a_failed_background_runs_report_and_activity_lead_with_the_runtimes_error(
    d: DaemonProcess, work: Path
) -> None:
    tid = d.call("thread/create", {"title": "nightly", "cwd": str(work)})["id"]
    d.call("thread/push", {"threadId": tid, "text": "check", "source": "cron", "agent": "fails"})
    wait_for(lambda: [r["status"] for r in roots(d, tid)] == ["settled"], what="the push root")
    report = wait_for(
        lambda: next(
            (i for i in d.call("thread/transcript", {"threadId": tid})["items"]
             if i["type"] == "report"),
            None,
        ),
        what="the report",
    )  # fmt: skip
    assert report["status"] == "failed"
    assert report["text"].splitlines()[0] == NOT_LOGGED_IN and no_json(report["text"])
    activity = d.cli("activity", "--thread", tid)
    assert activity.returncode == 0, activity.stderr
    assert f"    {NOT_LOGGED_IN}" in activity.stdout.splitlines()
