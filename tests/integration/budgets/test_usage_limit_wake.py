"""Resume after a usage limit on a real alpd (docs/budgets.md): a stand-in `claude` prints
what Claude Code 2.1.328 prints at a subscription's usage limit (`api_error`
`usage_limit_reached` with `resetsAt` two seconds on, then exits 1) for its first N runs and a
normal result after. The root that hit it gets exactly one wake of its thread at the reset —
a schedule with `reason` `usage-limit` and `wakeOf`, in `alp schedule list` and `alp ps` —
which fires by itself and the thread goes on; wakes in a row stop at MAX_WAKES; `alp schedule
rm` cancels one."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from daemons import StartAlpd, roots, settled
from polling import wait_for

from alpd.domain.budgets.usage_limit import MAX_WAKES
from alpd.testing.daemon import DaemonProcess

#: a stand-in `claude`: at the usage limit for its first N runs (N in `limited`), then fine
LIMITED_CLAUDE = """#!{python}
import json, sys, time
from pathlib import Path
state = Path({state!r})
runs = int((state / "runs").read_text()) if (state / "runs").exists() else 0
(state / "runs").write_text(str(runs + 1))
with (state / "prompts").open("a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
limited = int((state / "limited").read_text())
print(json.dumps({{"type": "system", "subtype": "init"}}))
if runs < limited:
    delay = int((state / "delay").read_text()) if (state / "delay").exists() else 2
    reset = int(time.time()) + delay
    text = "You've hit your 5-hour limit \\u00b7 resets 4:40am (UTC)"
    print(json.dumps({{"type": "assistant", "error": "rate_limit", "api_error_status": 429,
        "api_error": "usage_limit_reached",
        "api_error_params": {{"rate_limit_info": {{"status": "rejected", "resetsAt": reset,
                                                 "rateLimitType": "five_hour"}}}},
        "message": {{"content": [{{"type": "text", "text": text}}]}}}}))
    print(json.dumps({{"type": "result", "is_error": True, "api_error": "usage_limit_reached",
                      "result": text}}))
    sys.exit(1)
print(json.dumps({{"type": "result", "is_error": False, "result": "done, after the reset"}}))
"""

CONFIG = """
[agents.limited]
runtime = "claude"

[runtimes.claude]
command = {command}
"""


@pytest.fixture
def state(tmp_path: Path) -> Path:
    folder = tmp_path / "state"
    folder.mkdir()
    (folder / "limited").write_text("1")
    return folder


@pytest.fixture
def d(start_alpd: StartAlpd, tmp_path: Path, state: Path) -> DaemonProcess:
    fake = tmp_path / "claude"
    fake.write_text(LIMITED_CLAUDE.format(python=sys.executable, state=str(state)))
    fake.chmod(0o755)
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude-config")}
    return start_alpd(CONFIG.format(command=json.dumps(str(fake))), extra_env=env)


def go(d: DaemonProcess, work: Path) -> tuple[str, str]:
    thread: Any = d.call("thread/create", {"title": "limited", "cwd": str(work)})
    started: Any = d.call(
        "thread/continue",
        {"threadId": thread["id"], "agent": "limited", "headless": True, "prompt": "do the job"},
    )
    return thread["id"], started["execution"]["id"]


def wakes(d: DaemonProcess, thread_id: str) -> list[dict[str, Any]]:
    listed: Any = d.call("schedule/list", {"threadId": thread_id})
    return [s for s in listed["schedules"] if s.get("reason") == "usage-limit"]


def test_a_usage_limit_wakes_its_thread_once_at_the_reset_and_the_thread_goes_on(
    d: DaemonProcess, work: Path, state: Path
) -> None:
    thread_id, first = go(d, work)
    assert settled(d, first)["outcome"] == "failed"
    [wake] = wait_for(lambda: wakes(d, thread_id), what="the wake after the limit")
    assert wake["wakeOf"] == first and wake["status"] in ("active", "done")
    assert wake["agent"] == "limited" and "usage limit" in wake["prompt"]
    assert first in wake["prompt"] and "5-hour limit" in wake["prompt"]
    reset = datetime.fromisoformat(wake["rule"].removeprefix("at ").replace("Z", "+00:00"))
    assert 0 <= (reset - datetime.fromisoformat(wake["createdAt"])).total_seconds() <= 3

    def second_root() -> list[dict[str, Any]] | None:
        found = roots(d, thread_id)
        return found if len(found) == 2 else None

    found = wait_for(second_root, 30, "the wake's root")
    woken = next(r for r in found if r["id"] != first)
    assert woken["kind"] == "scheduled" and woken["origin"]["scheduleId"] == wake["id"]
    assert datetime.fromisoformat(woken["createdAt"]) >= reset
    assert settled(d, woken["id"])["outcome"] == "completed"
    assert "usage limit" in (state / "prompts").read_text().splitlines()[1]
    # the settle looked at again: still one wake; the done wake fires no more
    d.call("daemon/sweep")
    assert [w["id"] for w in wakes(d, thread_id)] == [wake["id"]]
    assert len(roots(d, thread_id)) == 2


def test_wakes_in_a_row_stop_at_the_cap(d: DaemonProcess, work: Path, state: Path) -> None:
    (state / "limited").write_text("99")
    thread_id, _first = go(d, work)

    def all_ran() -> bool:
        return len(roots(d, thread_id)) == MAX_WAKES + 1 and all(
            r["status"] == "settled" for r in roots(d, thread_id)
        )

    wait_for(all_ran, 60, f"the first run and {MAX_WAKES} wakes")
    d.call("daemon/sweep")
    assert len(wakes(d, thread_id)) == MAX_WAKES
    assert all(w["status"] == "done" for w in wakes(d, thread_id))
    assert len(roots(d, thread_id)) == MAX_WAKES + 1


def test_a_wake_is_in_ps_and_schedule_list_and_rm_cancels_it(
    d: DaemonProcess, work: Path, state: Path
) -> None:
    (state / "delay").write_text("600")  # the reset ten minutes on: caught before it fires
    thread_id, first = go(d, work)
    settled(d, first)
    [wake] = wait_for(lambda: wakes(d, thread_id), what="the wake")
    assert wake["status"] == "active" and wake["nextFireAt"]
    listed = d.cli("schedule", "list")
    assert wake["id"] in listed.stdout and "usage limit reset" in listed.stdout, listed.stdout
    shown = d.cli("schedule", "show", wake["id"])
    assert first in shown.stdout and "usage limit" in shown.stdout, shown.stdout
    ps: Any = d.call("daemon/ps", {})
    assert [s["reason"] for s in ps["schedules"] if s["id"] == wake["id"]] == ["usage-limit"]
    removed = d.cli("schedule", "rm", wake["id"])
    assert removed.returncode == 0, removed.stderr
    assert wakes(d, thread_id) == []
    d.call("daemon/sweep")
    assert len(roots(d, thread_id)) == 1
