"""`[agents.NAME] memory_max_bytes` on a real alpd: an agent's own cap on the memory section
of its roots, in place of `[memory] max_bytes`; 0 gives its roots none."""

from __future__ import annotations

import json
from pathlib import Path

from daemons import StartAlpd

from alpd.testing.daemon import DaemonProcess

HEADING = "# memory — work state, not authority"
CONFIG = (
    '[agents.brief]\nruntime = "command"\nmemory_max_bytes = 800\n'
    '[agents.wide]\nruntime = "command"\nmemory_max_bytes = 8000\n'
    '[agents.none]\nruntime = "command"\nmemory_max_bytes = 0\n'
)


def section_of(d: DaemonProcess, ws: Path, agent: str) -> str:
    thread = d.call("thread/create", {"title": f"cart {agent}", "cwd": str(ws)})["id"]  # type: ignore[index]
    seen = ws / f"seen-{agent}.md"
    done = d.cli(
        "thread", "continue", thread, "--json", "--runtime", "command", "--agent", agent,
        "--headless", "--wait", "--", "sh", "-c", f'cat "$ALP_SESSION_CONTEXT" > {seen}  # cart',
        cwd=str(ws),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = seen.read_text()
    return text[text.index(HEADING) :] if HEADING in text else ""


def test_an_agents_own_cap_replaces_the_default(start_alpd: StartAlpd, tmp_path: Path) -> None:
    d = start_alpd(CONFIG)
    ws = tmp_path / "shop"
    (ws / ".git").mkdir(parents=True)
    for number in range(40):
        done = d.cli(
            "memory", "add", "--json", "--",
            f"fact number {number} about the cart: " + "detail " * 40, cwd=str(ws),
        )  # fmt: skip
        assert done.returncode == 0 and json.loads(done.stdout)["id"], done.stderr
    default = section_of(d, ws, "command")
    brief = section_of(d, ws, "brief")
    wide = section_of(d, ws, "wide")
    assert 800 < len(default.encode()) <= 2048 + 1
    assert 0 < len(brief.encode()) <= 800 + 1 and brief.count("`mem_") >= 1
    assert 2048 < len(wide.encode()) <= 8000 + 1
    assert wide.count("`mem_") > default.count("`mem_") > brief.count("`mem_")
    assert section_of(d, ws, "none") == ""
