"""The small things a newcomer tripped on (issue 22, point 8), on a real alpd."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from daemons import StartAlpd, cli_json

TICK = '[agents.tick]\nruntime = "command"\nargs = ["true"]\n'


def test_schedule_rm_says_it_removed(start_alpd: StartAlpd, work: Path) -> None:
    d = start_alpd(TICK)
    thread = cli_json(d, "thread", "create", "--title", "nightly", cwd=work)
    added = d.cli("schedule", "add", thread["id"], "--every", "1h", "--agent", "tick",
                  "--json", "--", "go")  # fmt: skip
    assert added.returncode == 0, added.stderr
    schedule = json.loads(added.stdout)
    removed = d.cli("schedule", "rm", schedule["id"])
    assert removed.returncode == 0, removed.stderr
    said = removed.stdout.strip()
    assert said == f"removed {schedule['id']} (every 1h); its runs stay in the thread"
    assert cli_json(d, "schedule", "list")["schedules"] == []


def _lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_long_lists_take_quiet_and_limit(start_alpd: StartAlpd, work: Path) -> None:
    d = start_alpd(TICK)
    made = [cli_json(d, "thread", "create", "--title", f"t{i}", cwd=work) for i in range(3)]
    newest_first = [t["id"] for t in reversed(made)]
    quiet = d.cli("thread", "list", "-q", cwd=str(work))
    assert sorted(_lines(quiet)) == sorted(newest_first) and quiet.stderr == ""
    cut = d.cli("thread", "list", "--limit", "2", cwd=str(work))
    assert len(_lines(cut)) == 2
    assert "alp: 2 shown, the limit; `--limit 4` shows more" in cut.stderr
    whole = d.cli("thread", "list", "--limit", "3", "--quiet", cwd=str(work))
    assert len(_lines(whole)) == 3 and whole.stderr == ""
    assert len(cli_json(d, "thread", "list", "--limit", "1", "-q", cwd=work)["threads"]) == 1
    refused = d.cli("thread", "list", "--limit", "0", cwd=str(work))
    assert refused.returncode == 2 and "--limit takes 1..10000" in refused.stderr

    tid = made[0]["id"]
    for _ in range(2):
        done = d.cli("thread", "continue", tid, "--agent", "tick", "--headless", "--prompt",
                     "go", "--wait", cwd=str(work))  # fmt: skip
        assert done.returncode == 0, done.stderr
    runs = _lines(d.cli("activity", "-q"))
    assert len(runs) == 2 and all(r.startswith("exec_") for r in runs)
    assert _lines(d.cli("activity", "-q", "--limit", "1")) == runs[:1]

    added = d.cli("schedule", "add", tid, "--every", "1h", "--agent", "tick", "--json", "--",
                  "go")  # fmt: skip
    assert _lines(d.cli("schedule", "list", "-q")) == [json.loads(added.stdout)["id"]]

    for text in ("prices are in cents", "deploys go through make ship"):
        assert d.cli("memory", "add", "--", text, cwd=str(work)).returncode == 0
    memories = _lines(d.cli("memory", "list", "-q", cwd=str(work)))
    assert len(memories) == 2 and all(m.startswith("mem_") for m in memories)
    one = d.cli("memory", "list", "--limit", "1", cwd=str(work))
    assert len(_lines(one)) >= 1 and "1 shown, the limit; `--limit 2`" in one.stderr

    assert _lines(d.cli("inbox", "-q")) == []


def test_a_mistyped_agent_gets_the_close_one(start_alpd: StartAlpd, work: Path) -> None:
    d = start_alpd(TICK)
    cli_json(d, "thread", "create", "--title", "ops", cwd=work)
    done = d.cli("push", "ops", "--from", "ci", "--agent", "tik", "--", "x", cwd=str(work))
    assert done.returncode == 1
    assert "AGENT_NOT_FOUND: no agent 'tik' (did you mean 'tick'?)" in done.stderr
