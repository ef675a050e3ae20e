"""A thread's budget as a share of the subscription window, on a real alpd (issue 27, point
4; docs/budgets.md): a stand-in `codex` writes its rollout as the real one does when signed
in with a subscription — a `token_count` every 0.2 s whose `rate_limits.primary` fills the
5-hour window — and the history sync reads it; the thread's `--window-percent` warns at the
soft share, ends the root `budget-exceeded` at the hard one, refuses the next root until the
window resets, and `alp ps` shows the window. Claude Code reports no window offline: a window
budget never stops its roots, even while Codex's window is full."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from daemons import StartAlpd, settled
from polling import wait_for
from spending_claude import spending_claude

from alpctl.client import RpcError
from alpd.testing.daemon import DaemonProcess

#: a stand-in `codex exec --json`: announces its session, then every 0.2 s a response whose
#: token_count carries the window as `window.json` (next to it) describes it
WINDOWED_CODEX = """#!{python}
import json, os, sys, time, uuid
from pathlib import Path
shape = json.loads((Path(sys.argv[0]).parent / "window.json").read_text())
sid = str(uuid.uuid4())
day = Path(os.environ["CODEX_HOME"]) / "sessions" / "2026" / "12" / "02"
day.mkdir(parents=True, exist_ok=True)
rollout = day / ("rollout-2026-12-02T06-00-00-" + sid + ".jsonl")
def write(kind, payload):
    with rollout.open("a") as f:
        f.write(json.dumps({{"timestamp": "2026-12-02T06:00:00.000Z", "type": kind,
                            "payload": payload}}) + "\\n")
write("session_meta", {{"id": sid, "cwd": os.getcwd()}})
print(json.dumps({{"type": "thread.started", "thread_id": sid}}), flush=True)
reset = int(time.time()) + shape["reset_in"]
n = 0
while True:
    used = min(100.0, shape["start"] + shape["step"] * n)
    window = {{"used_percent": used, "window_minutes": 300, "resets_at": reset}}
    write("event_msg", {{"type": "token_count",
        "info": {{"last_token_usage": {{"input_tokens": 100, "output_tokens": 10}}}},
        "rate_limits": {{"limit_id": "codex", "primary": window, "secondary": None}}}})
    n += 1
    time.sleep(0.2)
"""

CONFIG = """
[agents.windowed]
runtime = "codex"
timeout = "10m"

[agents.spender]
runtime = "claude"
timeout = "10m"

[runtimes.codex]
command = {codex}

[runtimes.claude]
command = {claude}
"""


@pytest.fixture
def d(start_alpd: StartAlpd, tmp_path: Path) -> DaemonProcess:
    stand_ins = tmp_path / "stand-ins"
    stand_ins.mkdir()
    (stand_ins / "codex").write_text(WINDOWED_CODEX.format(python=sys.executable))
    (stand_ins / "codex").chmod(0o755)
    spending_claude(stand_ins / "claude")
    shape(tmp_path, start=10, step=5, reset_in=600)
    env = {
        "CODEX_HOME": str(tmp_path / "codex-home"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude-config"),
    }
    config = CONFIG.format(
        codex=json.dumps(str(stand_ins / "codex")), claude=json.dumps(str(stand_ins / "claude"))
    )
    return start_alpd(config, extra_env=env)


def shape(tmp_path: Path, *, start: float, step: float, reset_in: int) -> None:
    """How full the next stand-in Codex run says the window is, and when it resets."""
    (tmp_path / "stand-ins" / "window.json").write_text(
        json.dumps({"start": start, "step": step, "reset_in": reset_in})
    )


def go(d: DaemonProcess, thread_id: str, agent: str) -> dict[str, Any]:
    started: Any = d.call(
        "thread/continue",
        {"threadId": thread_id, "agent": agent, "headless": True, "prompt": "go"},
    )
    return dict(started["execution"])


def test_a_window_budget_warns_then_ends_a_codex_root_and_refuses_until_the_reset(
    d: DaemonProcess, work: Path, tmp_path: Path
) -> None:
    thread: Any = d.call("thread/create", {"title": "windowed", "cwd": str(work)})
    shown = d.cli(
        "thread", "budget", thread["id"], "--window-percent", "60", "--soft-window-percent", "30"
    )
    assert shown.returncode == 0, shown.stderr
    assert "window not reported of 60% (soft 30%)" in shown.stdout, shown.stdout
    # 5 points a second: the soft share 2 s in, the hard one 8 s in (a pass every 2 s)
    shape(tmp_path, start=20, step=1, reset_in=20)
    with d.client() as events:
        events.call("events/subscribe", {"events": ["budget/warning"]})
        execution = go(d, thread["id"], "windowed")
        soft = next(events.notifications())["params"]
        hard = next(events.notifications())["params"]
        done = settled(d, execution["id"], timeout=30)
    assert done["outcome"] == "budget-exceeded"
    assert (soft["budget"]["level"], hard["budget"]["level"]) == ("soft", "hard")
    assert soft["budget"]["windowUsedPercent"] >= 30
    assert "subscription window" in soft["message"] and "soft limit reached" in soft["message"]
    assert hard["budget"]["windowUsedPercent"] >= 60
    # at most a sync tick and a pass past the share (5 points a second)
    assert hard["budget"]["windowUsedPercent"] <= 60 + 20, hard

    ps = json.loads(d.cli("ps", "--json").stdout)
    [window] = [w for w in ps["windows"] if w["runtime"] == "codex"]
    assert window["name"] == "primary" and window["windowMinutes"] == 300
    assert window["usedPercent"] >= 60
    human = d.cli("ps").stdout
    assert "WINDOWS 1" in human and "codex    primary" in human, human
    assert "window " in human and "of 60% (soft 30%)" in human, human

    with pytest.raises(RpcError) as info:
        go(d, thread["id"], "windowed")
    assert info.value.name == "BUDGET_EXCEEDED"
    assert info.value.data["windowPercent"] == 60 and info.value.data["windowUsedPercent"] >= 60
    assert "once the window resets" in str(info.value)

    # the window resets (its resets_at passes): the thread's roots run again
    reset = window["resetsAt"]
    wait_for(lambda: time.time() > reset + 0.5, what="the window's reset", timeout=25)
    shape(tmp_path, start=1, step=0, reset_in=600)
    again = go(d, thread["id"], "windowed")
    d.call("execution/cancel", {"executionId": again["id"]})
    assert settled(d, again["id"])["outcome"] == "cancelled"


def test_claude_reports_no_window_so_a_window_budget_never_stops_it(
    d: DaemonProcess, work: Path, tmp_path: Path
) -> None:
    # Codex's window is nearly full (a run of another thread said so)...
    shape(tmp_path, start=95, step=0, reset_in=600)
    other: Any = d.call("thread/create", {"title": "codex side", "cwd": str(work)})
    codex_run = go(d, other["id"], "windowed")

    def full() -> bool:
        ps: Any = d.call("daemon/ps", {})
        return any(w["runtime"] == "codex" for w in ps.get("windows", []))

    wait_for(full, what="Codex's window in ps")
    d.call("execution/cancel", {"executionId": codex_run["id"]})
    settled(d, codex_run["id"])
    # ...but a Claude Code root's window is not reported: its 50% window budget never stops it
    thread: Any = d.call("thread/create", {"title": "claude side", "cwd": str(work)})
    d.call(
        "thread/budget", {"threadId": thread["id"], "windowPercent": 50, "softWindowPercent": 10}
    )
    execution = go(d, thread["id"], "spender")
    # five passes of the reconciler (every 2 s), the sync reading the transcript every second
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        shown: Any = d.call("execution/show", {"executionId": execution["id"]})
        assert shown["status"] != "settled", shown
        time.sleep(0.5)
    spent: Any = d.call("thread/budget", {"threadId": thread["id"]})
    assert spent["budget"]["spentTokens"] > 0  # it ran and spent
    d.call("execution/cancel", {"executionId": execution["id"]})
    assert settled(d, execution["id"])["outcome"] == "cancelled"


def test_a_bad_window_share_is_refused(d: DaemonProcess, work: Path) -> None:
    thread: Any = d.call("thread/create", {"title": "bad", "cwd": str(work)})
    with pytest.raises(RpcError) as info:
        d.call("thread/budget", {"threadId": thread["id"], "windowPercent": 40,
                                 "softWindowPercent": 50})  # fmt: skip
    assert info.value.name == "INVALID_ARGUMENT" and "below the hard one" in str(info.value)
    refused = d.cli("thread", "budget", thread["id"], "--window-percent", "150")
    assert refused.returncode != 0 and "<= 100" in refused.stderr
