"""The Neovim plugin (editors/nvim) in a real `nvim --headless` against a real alpd: the
threads list, a thread view, search into the quickfix list, and a live update; line breaks in
titles and pins, :AlpContinue and `c` in a real terminal, live updates across a daemon
restart."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from protocol.paths import default_socket_path
from tests.editors.conftest import DECISION, NVIM_PLUGIN, REPO, SeededDaemon
from tests.editors.nvim_driver import drive

pytestmark = pytest.mark.editors


def run_nvim(nvim: str, seeded: SeededDaemon, tmp_path: Path) -> dict[str, object]:
    report, ready = tmp_path / "report.json", tmp_path / "ready"
    env = {
        **seeded.daemon.env,
        "ALP_NVIM_REPORT": str(report),
        "ALP_NVIM_READY": str(ready),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    check = REPO / "tests" / "editors" / "nvim_check.lua"
    argv = [nvim, "--headless", "-u", "NONE", "-i", "NONE", "--cmd", f"set rtp^={NVIM_PLUGIN}"]
    argv += ["--cmd", "runtime plugin/alp.lua", "-c", f"luafile {check}"]
    process = subprocess.Popen(
        argv, env=env, cwd=seeded.work, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 120
        while not ready.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if ready.exists():
            created = seeded.daemon.cli(
                "thread", "create", "--title", "made while watching", cwd=str(seeded.work)
            )
            assert created.returncode == 0, created.stderr
        process.wait(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    return json.loads(report.read_text())


def test_the_nvim_plugin_lists_shows_searches_and_follows(
    nvim: str, seeded: SeededDaemon, tmp_path: Path
) -> None:
    report = run_nvim(nvim, seeded, tmp_path)
    assert report["ok"], report.get("error")
    assert report["socket_path"] == str(default_socket_path(seeded.daemon.env))
    uid = os.getuid()
    assert report["rules"] == {
        "xdg": "/run/user/7/alp/alpd.sock",
        "relative_xdg": f"/tmp/alp-{uid}/alpd.sock",
        "empty_socket": "/x/alp/alpd.sock",
    }

    listing = "\n".join(report["list"])  # type: ignore[arg-type]
    assert "planning the ledger" in listing and seeded.thread_id in listing

    assert report["show_name"] == f"alp://thread/{seeded.thread_id}"
    view = "\n".join(report["show"])  # type: ignore[arg-type]
    assert "Roots (1)" in view and seeded.execution_id in view
    assert f"- {DECISION}  [{seeded.execution_id}]" in view, view

    quickfix = report["quickfix"]
    assert quickfix and all(item["name"] == f"alp://thread/{seeded.thread_id}" for item in quickfix)
    assert report["qf_opened"] == f"alp://thread/{seeded.thread_id}"
    # search modes: no model here, so hybrid answers by keyword and says so
    assert report["keyword_noticed"] is False
    assert report["keyword_title"] == "alp search (keyword): ledger"
    assert "keyword hits only" in report["hybrid_notice"]
    assert report["meaning_refused"] and report["bad_mode_refused"]

    assert report["live"], report["live_list"]
    assert report["last_event"] == "thread/changed"


def test_the_thread_view_shows_the_recap_when_there_is_one_and_falls_back_when_not(
    nvim: str, tmp_path: Path
) -> None:
    report_path = tmp_path / "report.json"
    check = REPO / "tests" / "editors" / "nvim_render_check.lua"
    argv = [nvim, "--headless", "-u", "NONE", "-i", "NONE", "--cmd", f"set rtp^={NVIM_PLUGIN}"]
    done = subprocess.run(
        [*argv, "-c", f"luafile {check}"],
        env={**os.environ, "ALP_NVIM_REPORT": str(report_path)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(report_path.read_text())
    assert report["ok"], report["error"]
    for fallback in (report["absent"], report["null"]):
        assert fallback[0] == "the title  thread_1"
        gist = fallback.index("Gist")
        assert fallback[gist + 1 : gist + 3] == ["  ship the ledger", "  last run: schema written"]
    recap = report["recap"]
    assert recap[0] == "Ledger: schema settled, migrations next  thread_1"
    gist = recap.index("Gist (recap of context rev 1; derived, not authority)")
    assert recap[gist + 1 : gist + 5] == [
        "  The schema is settled.",
        "  Migrations come next.",
        "  Open tasks:",
        "    - write the first migration",
    ]
    assert "  ship the ledger" not in recap[gist : gist + 6]
    assert "Ledger: schema settled" in report["list"][2] and "plain" in report["list"][3]


PIN = "first line of the pin\nsecond line of the pin"


def test_line_breaks_continue_and_a_daemon_restart_in_the_nvim_plugin(
    nvim: str, seeded: SeededDaemon, tmp_path: Path
) -> None:
    """Issue 21, point 17: a title and a pin with line breaks (which used to raise at every
    redraw), :AlpContinue and `c` under the default setup (E475), and live updates that come
    back by themselves after the daemon restarts."""
    daemon, work = seeded.daemon, str(seeded.work)
    daemon.call("thread/create", {"title": "two\nlines", "cwd": work})
    pinned = daemon.cli(
        "--title", "pins on two lines", "--runtime", "command", "--headless", "--wait", "--json",
        "--", "sh", "-c", 'alp context pin decision -- "$(printf "%s\\n%s" "$0" "$1")"',
        *PIN.split("\n"), cwd=work,
    )  # fmt: skip
    assert pinned.returncode == 0, (pinned.stdout, pinned.stderr)
    pin_run = json.loads(pinned.stdout)
    pin_thread, pin_execution = pin_run["thread"]["id"], pin_run["execution"]["id"]

    env = {
        **daemon.env,
        # the default setup: `alp` is whatever PATH finds, as for a user (this venv's)
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "ALP_NVIM_REPORT": str(tmp_path / "report.json"),
        "ALP_NVIM_STEPS": str(tmp_path / "steps"),
        "ALP_NVIM_THREAD": seeded.thread_id,
        "ALP_NVIM_PIN_THREAD": pin_thread,
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }

    actions: dict[str, Callable[[], object]] = {
        "title-event": lambda: daemon.call(
            "thread/create", {"title": "made\nwhile watching", "cwd": work}
        ),
        "restart": daemon.restart,
        "after-restart": lambda: daemon.call(
            "thread/create", {"title": "after the restart", "cwd": work}
        ),
    }
    report = drive(nvim, "nvim_live_check.lua", env, seeded.work, actions)
    errors = str(report["stderr"])
    assert report["ok"], (report.get("error"), errors)

    # the title with a line break: one line of the list, the break shown as ⏎
    listing = report["list"]
    assert any("two ⏎ lines" in line for line in listing), listing
    # the multi-line pin: each of its lines, the source on the first
    show = report["show"]
    assert f"    - first line of the pin  [{pin_execution}]" in show, show
    assert "      second line of the pin" in show, show
    # an event about a thread whose title has a line break redraws the list, quietly
    assert report["live_title"], report["list_after_event"]

    # :AlpContinue ran `alp thread continue` in a terminal, which made a second root
    assert report["termopen"][0] == [
        "alp", "thread", "continue", seeded.thread_id, "--runtime", "command", "--",
        "echo", "continued-from-nvim",
    ]  # fmt: skip
    assert report["continue"]["status"] == 0 and report["continue"]["seen"], report["continue"]
    roots = daemon.call("thread/show", {"threadId": seeded.thread_id})["roots"]  # type: ignore[index]
    assert len(roots) == 2 and roots[1]["outcome"] == "completed", roots
    # `c` on the list opened a terminal running `alp thread continue ID` (no E475)
    assert report["c_is_terminal"], report
    assert report["termopen"][1] == ["alp", "thread", "continue", seeded.thread_id]
    assert report["c"]["seen"], report["c"]

    # after the restart: reconnected, resubscribed, and an event shows up by itself
    assert report["following_before"] and report["reconnected"], report["notifications"]
    assert report["live_after_restart"], report["list_after_restart"]
    assert report["last_event_title"] == "after the restart"
    messages = [n["msg"] for n in report["notifications"]]
    lost = [m for m in messages if m.startswith("alp: lost the daemon")]
    back = [m for m in messages if m.startswith("alp: reconnected")]
    assert len(lost) == 1 and len(back) == 1, messages
    # and nothing else was said: no error at any event, no E475
    assert len(messages) == 2, messages
    assert "Error" not in errors and "E475" not in errors, errors
    assert "E475" not in report["errmsg"]
