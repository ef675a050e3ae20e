"""The small things a newcomer tripped on (issue 22, point 8), on a real alpd."""

from __future__ import annotations

import json
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
