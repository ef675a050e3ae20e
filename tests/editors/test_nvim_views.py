"""The Neovim plugin's transcript, memory and diff views (issues 22, 25, 27) in a real
`nvim --headless` against a real alpd: a transcript paged back to its start and following a
new root by itself, a root's file diff and its restore (asked first, forced after
WORKSPACE_CHANGED, undone), the memory list with a promoted pin, an added, superseded,
confirmed and retracted memory, a memory's citation and the review; and the editor's times in
the CLI's one format (alpctl/clock.py) in several zones."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from alpctl.clock import local_time
from tests.editors.conftest import DECISION, MEMORY, NVIM_PLUGIN, ViewsDaemon
from tests.editors.nvim_driver import drive

pytestmark = pytest.mark.editors


def in_zone(zone: str, fn: Callable[..., str], *args: object, **kwargs: object) -> str:
    """`fn(*args, **kwargs)` with this process's local zone set to `zone` for the call."""
    saved = os.environ.get("TZ")
    os.environ["TZ"] = zone
    time.tzset()
    try:
        return fn(*args, **kwargs)
    finally:
        if saved is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = saved
        time.tzset()


def test_transcript_memory_and_diff_views_in_nvim(
    nvim: str, views: ViewsDaemon, tmp_path: Path
) -> None:
    daemon, work, thread = views.daemon, views.work, views.thread_id
    env = {
        **daemon.env,
        "TZ": "Europe/Berlin",
        "ALP_NVIM_REPORT": str(tmp_path / "report.json"),
        "ALP_NVIM_STEPS": str(tmp_path / "steps"),
        "ALP_NVIM_THREAD": thread,
        "ALP_NVIM_ADOPTED": views.adopted_id,
        "ALP_NVIM_WORK": str(work),
        "ALP_NVIM_DECISION": DECISION,
        "ALP_NVIM_MEMORY": MEMORY,
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    seen: dict[str, tuple[str | None, str | None]] = {}

    def files(name: str) -> Callable[[], None]:
        def look() -> None:
            a, b = work / "a.txt", work / "b.txt"
            seen[name] = (
                a.read_text() if a.exists() else None,
                b.read_text() if b.exists() else None,
            )

        return look

    actions: dict[str, Callable[[], object]] = {
        "restored": files("restored"),
        "undone": files("undone"),
        "forced": files("forced"),
        "continue": lambda: daemon.call(
            "thread/continue",
            {
                "threadId": thread,
                "runtime": "command",
                "headless": True,
                "prompt": "go",
                "args": ["echo", "continued"],
            },
        ),
    }
    report = drive(nvim, "nvim_views_check.lua", env, work, actions)
    assert report["ok"], (report.get("error"), report["stderr"])
    assert "Error" not in report["stderr"], report["stderr"]

    # the transcript: the newest page first, older pages with `o` down to the start
    everything = daemon.call(
        "thread/transcript", {"threadId": views.adopted_id, "after": "", "limit": 500}
    )
    assert isinstance(everything, dict)
    items = everything["items"]
    assert report["log_name"] == f"alp://log/{views.adopted_id}"
    first, whole = report["log_first"], report["log_all"]
    assert "… older items: press o" in first, first
    assert report["log_presses"] == (len(items) - 1) // 3, (report["log_presses"], len(items))
    assert "(the start of the thread)" in whole and "… older items: press o" not in whole
    text = "\n".join(whole)
    assert "── root #1 · claude (claude) · interactive · completed" in text, text
    assert " you  " in text and " assistant  " in text and " ⚙ " in text, text
    # each item once, oldest first, in the daemon's order
    tools = [i["tool"]["name"] for i in items if i["type"] == "tool"]
    shown_tools = [line.split(" ⚙ ")[1].split(" ")[0] for line in whole if " ⚙ " in line]
    assert shown_tools == tools
    # times as the CLI prints them, in the editor's zone (TZ=Europe/Berlin)
    assert f"{in_zone('Europe/Berlin', local_time, items[0]['at'], today_short=True)} ──" in text
    said = next(i for i in items if i["type"] == "prompt")
    clock = in_zone("Europe/Berlin", local_time, said["at"], today_short=True)
    assert f"{clock} you  {said['text']}" in whole, whole

    # the thread view: its root's start in the CLI's format
    shown = daemon.call("thread/show", {"threadId": thread})
    assert isinstance(shown, dict)
    root = shown["roots"][0]
    started = in_zone("Europe/Berlin", local_time, root.get("startedAt") or root["createdAt"])
    assert any(started in line and root["id"] in line for line in report["show"]), report["show"]

    # the diff of the last root: its files and the patch, as a diff buffer
    assert report["diff_name"] == f"alp://diff/{thread}"
    diff = report["diff"]
    assert "  M a.txt  +1 -0" in diff and "  A b.txt  +1 -0" in diff, diff
    assert "+two" in diff and "+new" in diff and report["diff_filetype"] == "diff"
    # `U` asked first, listing what it would change, then restored
    assert seen["restored"] == ("one\n", None), seen
    question = report["confirms"][0]
    assert "delete b.txt (created)" in question and "write a.txt (modified)" in question
    # :AlpUndoFiles took the restore back
    assert seen["undone"] == ("one\ntwo\n", "new\n"), seen
    # a change since: WORKSPACE_CHANGED, asked again, forced
    assert "WORKSPACE_CHANGED" in report["confirms"][2], report["confirms"]
    assert seen["forced"] == ("one\n", None), seen

    # live: the new root appeared by itself; a notification's item once, after the page
    assert report["live_root"], report["live_after"]
    assert sum("said while running" in line for line in report["notified"]) == 1
    assert report["notified"][-1].endswith("assistant  said while running")

    # memory
    assert any(MEMORY in line and views.memory_id in line for line in report["memory_first"])
    assert any(DECISION in line for line in report["memory_promoted"]), report["memory_promoted"]
    added = [line for line in report["memory_added"] if "make check" in line]
    assert added and added[0].startswith("convention global"), report["memory_added"]
    assert any("make test" in line for line in report["memory_superseded"])
    assert not any("make check" in line for line in report["memory_superseded"])
    assert not any(MEMORY in line for line in report["memory_retracted"])
    assert report["memory_show_name"].startswith("alp://memory/mem_")
    show = "\n".join(report["memory_show"])
    assert "Versions (3)" in show and "superseded" in show and "confirmed" in show, show
    assert "Cites" in show
    listed = daemon.call("memory/list", {"cwd": str(work), "retracted": True})
    assert isinstance(listed, dict)
    states = {m["text"]: m["status"] for m in listed["memories"]}
    assert states[MEMORY] == "retracted" and states[DECISION] == "active"
    assert states["run the tests with make test"] == "active"
    assert report["memory_review"][0].startswith("alp memory review"), report["memory_review"]


ISO_MOMENTS = [
    "2026-12-02T03:03:29.038Z",
    "2026-07-01T12:00:00Z",
    "2026-03-29T00:59:59Z",
    "2026-03-29T01:00:00+00:00",
    "2045-07-01T12:00:00+02:00",
    "1999-12-31T23:59:59.999Z",
    "not a time",
]


@pytest.mark.parametrize("zone", ["Europe/Berlin", "America/New_York", "Asia/Kolkata", "UTC"])
def test_nvim_times_are_the_clis(nvim: str, tmp_path: Path, zone: str) -> None:
    out, script = tmp_path / "times.json", tmp_path / "times.lua"
    script.write_text(
        "local c = require('alp.clock'); local out = {}\n"
        "for _, iso in ipairs(vim.json.decode(os.getenv('ALP_TIMES'))) do\n"
        "  table.insert(out, c.local_time(iso))\nend\n"
        "local f = io.open(os.getenv('ALP_TIMES_OUT'), 'w')\n"
        "f:write(vim.json.encode(out)); f:close()\n"
    )
    argv = [nvim, "--headless", "-u", "NONE", "-i", "NONE", "--cmd", f"set rtp^={NVIM_PLUGIN}"]
    env = {
        **os.environ,
        "TZ": zone,
        "ALP_TIMES": json.dumps(ISO_MOMENTS),
        "ALP_TIMES_OUT": str(out),
    }
    done = subprocess.run(
        [*argv, "-c", f"luafile {script}", "-c", "qa!"],
        env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    expected = [in_zone(zone, local_time, iso) for iso in ISO_MOMENTS]
    assert json.loads(out.read_text()) == expected
