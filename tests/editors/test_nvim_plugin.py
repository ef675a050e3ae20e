"""The Neovim plugin (editors/nvim) in a real `nvim --headless` against a real alpd: the
threads list, a thread view, search into the quickfix list, and a live update."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from protocol.paths import default_socket_path
from tests.editors.conftest import DECISION, NVIM_PLUGIN, REPO, SeededDaemon

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
