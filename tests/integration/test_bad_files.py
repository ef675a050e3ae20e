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
