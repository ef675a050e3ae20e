"""Files that are not what they are named: the daemon neither hangs nor stops answering.

A FIFO named like a session file used to block `history/import` in open() forever, holding a
worker thread that then kept SIGTERM from ending alpd.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from wire import RawConnection

from alpd.testing.daemon import DaemonProcess

FIXTURES = Path(__file__).parent.parent / "fixtures" / "runtimes"
FIFO_SESSION = "0badf1f0-0000-4000-8000-000000000000.jsonl"


def test_import_skips_a_fifo_named_like_a_session_and_alpd_still_stops(
    alpd: DaemonProcess, tmp_path: Path
) -> None:
    sessions = tmp_path / "claude-sessions"
    shutil.copytree(FIXTURES / "claude", sessions)
    os.mkfifo(sessions / FIFO_SESSION)
    regular = len(list((FIXTURES / "claude").glob("*.jsonl")))
    with RawConnection(alpd.socket_path, timeout=60) as conn:
        reply = conn.request("history/import", {"runtime": "claude", "path": str(sessions)})
    result = reply["result"]
    assert result["files"] == result["imported"] == regular
    assert alpd.stop() == 0


def config_of(alpd: DaemonProcess) -> Path:
    return alpd.home / "config.toml"


def test_a_config_that_is_a_fifo_is_refused_on_reload_and_the_daemon_answers(
    alpd: DaemonProcess,
) -> None:
    os.mkfifo(config_of(alpd))
    with RawConnection(alpd.socket_path, timeout=10) as conn:
        reply = conn.request("daemon/reload")
        assert reply["error"]["data"]["name"] == "CONFIG_INVALID", reply
        assert "not a regular file" in reply["error"]["message"], reply
        assert conn.request("daemon/ping")["result"]["pid"] == alpd.pid


def test_a_config_linked_to_dev_zero_is_refused_without_reading_it(alpd: DaemonProcess) -> None:
    config_of(alpd).symlink_to("/dev/zero")
    with RawConnection(alpd.socket_path, timeout=10) as conn:
        reply = conn.request("daemon/reload")
        assert reply["error"]["data"]["name"] == "CONFIG_INVALID", reply
        assert conn.request("daemon/ping")["result"]["pid"] == alpd.pid


def test_a_config_larger_than_the_cap_is_refused(alpd: DaemonProcess) -> None:
    with config_of(alpd).open("wb") as f:
        f.truncate(64 * 1024 * 1024)  # sparse: 64 MiB of nothing
    with RawConnection(alpd.socket_path, timeout=10) as conn:
        reply = conn.request("daemon/reload")
        assert reply["error"]["data"]["name"] == "CONFIG_INVALID", reply
        assert "larger than" in reply["error"]["message"], reply


def test_alpd_refuses_to_start_on_a_config_that_is_a_fifo(tmp_path: Path) -> None:
    import subprocess
    import sys

    from alpd.testing.daemon import daemon_env

    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    os.mkfifo(home / "config.toml")
    sock_dir = Path(f"/tmp/alp-fifo-{os.getpid()}")
    done = subprocess.run(
        [sys.executable, "-m", "alpd", "--home", str(home), "--socket", str(sock_dir / "s")],
        env=daemon_env(home, sock_dir / "s"),
        capture_output=True,
        text=True,
        timeout=20,
    )
    if sock_dir.exists():
        subprocess.run(["rm", "-rf", str(sock_dir)], check=False)
    assert done.returncode != 0
    assert "not a regular file" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
