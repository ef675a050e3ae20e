"""Reports on a real alpd: every non-interactive root and every sub-agent reports into its
thread (outcome, final message, cost, duration, secret-filtered); `--notify` announces it on
`events/subscribe` and through the desktop notifier when there is one; a sub-agent's result
goes back to its parent — taken by the live parent (`delivery/pending`), else one round
after the parent settles.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from daemons import StartAlpd, thread_show
from polling import wait_for

from alpd.testing.daemon import DaemonProcess

pytestmark = pytest.mark.both_stores

#: fake credential the secret filter knows (an Anthropic-style key), split so no scanner
#: mistakes this file for a leak
SECRET = "sk-ant-api03-" + "Xy7" * 30

PENDING_PY = """
import json, os, sys, time
from pathlib import Path
from alpctl.client import Client
deadline = time.monotonic() + 30
while time.monotonic() < deadline:
    with Client.connect(Path(os.environ["ALP_SOCKET"])) as client:
        found = client.call("delivery/pending", {})["deliveries"]
        if found:
            client.call("delivery/ack", {"ids": [item["id"] for item in found]})
    if found:
        Path("injected.json").write_text(json.dumps(found))
        break
    time.sleep(0.1)
"""

#: the lead works in `work` by absolute path: its own directory is its workspace (the git top
#: level above it), which a stray `.git` in a parent directory would move
LEAD = """
cd {work} || exit 1
case "$ALP_PROMPT" in
  *"result of sub-agent"*) printf %s "$ALP_PROMPT" > round.txt ;;
  inject) alp delegate helper -- 'echo child-done' >/dev/null && {py} pending.py ;;
  queue) alp delegate helper -- 'echo child-done; touch {work}/child.done' >/dev/null
         while [ ! -f child.done ]; do sleep 0.05; done; sleep 1 ;;
esac
"""


def config(py: str, work: Path) -> str:
    lead = LEAD.format(py=py, work=shlex.quote(str(work)))
    return f"""
[agents.watch]
runtime = "command"
args = ["sh", "-c", "echo checking; echo 'API_KEY={SECRET}'; echo all good"]

[agents.lead]
runtime = "command"
args = ["sh", "-c", {json.dumps(lead)}]
delegatesTo = ["helper"]

[agents.helper]
runtime = "command"
"""


@pytest.fixture
def d(start_alpd: StartAlpd, work: Path, tmp_path: Path) -> DaemonProcess:
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    notifier = fake_bin / "notify-send"
    notifier.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> {tmp_path / "notified.txt"}\n')
    notifier.chmod(0o755)
    env = {"PATH": f"{fake_bin}{os.pathsep}{os.environ['PATH']}"}
    return start_alpd(config(shlex.quote(sys.executable), work), extra_env=env)


@pytest.fixture
def work(work: Path) -> Path:
    (work / "pending.py").write_text(PENDING_PY)
    return work


def reports(d: DaemonProcess, thread_id: str) -> list[dict[str, Any]]:
    return list(thread_show(d, thread_id).get("reports", []))


def test_a_notified_push_reports_its_last_output_lines_filtered_and_announces_them(
    d: DaemonProcess, work: Path, tmp_path: Path
) -> None:
    thread = d.call("thread/create", {"title": "nightly checks", "cwd": str(work)})
    with d.client() as events:
        events.call("events/subscribe", {"events": ["thread/report"]})
        pushed = d.call(
            "thread/push",
            {"threadId": thread["id"], "text": "check", "source": "cron", "agent": "watch",
             "notify": True},
        )  # fmt: skip
        announced = next(events.notifications())
    assert announced["method"] == "thread/report"
    report = announced["params"]["report"]
    assert announced["params"]["threadTitle"] == "nightly checks"
    assert report["executionId"] == pushed["execution"]["id"]
    assert (report["kind"], report["outcome"], report["messageSource"]) == (
        "push", "completed", "output",
    )  # fmt: skip
    lines = report["message"].splitlines()
    assert (lines[0], lines[2]) == ("checking", "all good") and len(lines) == 3
    assert "[REDACTED:" in lines[1] and SECRET not in report["message"]
    assert report["durationSeconds"] >= 0
    assert report["origin"]["pushSource"] == "cron"

    assert [r["executionId"] for r in reports(d, thread["id"])] == [report["executionId"]]
    notified = wait_for(lambda: (tmp_path / "notified.txt").exists(), what="notify-send")
    assert notified
    shown = (tmp_path / "notified.txt").read_text()
    assert "alp · nightly checks" in shown and "push run completed" in shown
    assert SECRET not in shown


def test_without_notify_the_report_is_stored_but_not_announced(
    d: DaemonProcess, work: Path, tmp_path: Path
) -> None:
    thread = d.call("thread/create", {"cwd": str(work)})
    d.call("thread/push", {"threadId": thread["id"], "text": "x", "source": "t", "agent": "watch"})
    found = wait_for(lambda: reports(d, thread["id"]), what="the report")
    assert not found[0].get("notify", False)
    assert not (tmp_path / "notified.txt").exists()


def test_an_interactive_root_writes_no_report(d: DaemonProcess, work: Path) -> None:
    thread = d.call("thread/create", {"cwd": str(work)})
    started = d.call(
        "thread/continue",
        {"threadId": thread["id"], "runtime": "command", "headless": True,
         "args": ["echo", "hi"]},
    )  # fmt: skip
    d.call("execution/wait", {"executionId": started["execution"]["id"], "timeout": 30})
    d.call("daemon/sweep")  # the settle's hooks (which write reports) are done
    assert reports(d, thread["id"]) == []


def lead(d: DaemonProcess, work: Path, mode: str) -> str:
    thread = d.call("thread/create", {"title": "lead", "cwd": str(work)})
    d.call(
        "thread/continue",
        {"threadId": thread["id"], "agent": "lead", "headless": True, "prompt": mode,
         "cwd": str(work)},
    )  # fmt: skip
    return str(thread["id"])


def test_a_sub_agent_result_is_reported_and_queued_for_the_parents_next_round(
    d: DaemonProcess, work: Path
) -> None:
    thread_id = lead(d, work, "queue")
    wait_for(lambda: (work / "round.txt").exists(), what="the round carrying the result")
    shown = thread_show(d, thread_id)
    first, round_ = shown["roots"]
    assert (round_["kind"], round_["agent"]) == ("push", "lead")
    assert round_["origin"]["purpose"] == "sub-agent result"
    child_report = next(r for r in reports(d, thread_id) if r["kind"] == "sub-agent")
    assert child_report["parentExecutionId"] == first["id"]
    assert child_report["message"] == "child-done"
    prompt = (work / "round.txt").read_text()
    envelope, text = prompt.split("\n", 1)
    assert envelope.startswith('[alp · result of sub-agent "helper (exec_')
    assert text == "> child-done"


def test_a_live_parent_takes_its_sub_agent_result_and_no_round_follows(
    d: DaemonProcess, work: Path
) -> None:
    thread_id = lead(d, work, "inject")
    wait_for(lambda: (work / "injected.json").exists(), what="the parent to take the result")
    taken = json.loads((work / "injected.json").read_text())
    assert [t["text"] for t in taken] == ["child-done"]
    assert taken[0]["sourceKind"] == "sub-agent"
    wait_for(lambda: all(r["status"] == "settled" for r in thread_show(d, thread_id)["roots"]))
    d.call("daemon/sweep")  # the settles' hooks, then a delivery sweep, are done
    assert len(thread_show(d, thread_id)["roots"]) == 1
    assert not (work / "round.txt").exists()
