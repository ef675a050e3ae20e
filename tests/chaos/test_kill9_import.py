"""kill -9 of alpd in the middle of importing many small sessions (written a batch of files per
transaction), then a restart and the same import again: every session is there exactly once,
complete, with every entry once and its cursor at the end of its file.

On both backends (SQLite's file, or a PostgreSQL database: `store_access.raw_db`).

Cycles: `ALP_CHAOS_CYCLES` divided by 10 (at least 2).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from pathlib import Path

import pytest
from store_access import raw_db

from alpctl.client import DaemonUnreachable
from alpd.testing.daemon import DaemonProcess, running_daemon

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "integration"))
from transcripts import Claude

pytestmark = pytest.mark.chaos

CYCLES = max(2, int(os.environ.get("ALP_CHAOS_CYCLES", "20")) // 10)
SESSIONS = 300
RESTART_TIMEOUT = 60.0


def sessions(directory: Path) -> dict[str, set[str]]:
    """SESSIONS files of ~40 KB; session id → its entries' native ids."""
    out = {}
    text = "lorem ipsum dolor sit amet " * 60
    for n in range(SESSIONS):
        claude = Claude()
        lines = [claude.prompt(f"{n} {i} {text}") for i in range(24)]
        (directory / f"{claude.session}.jsonl").write_bytes(b"".join(lines))
        out[claude.session] = {f"{n} {i}" for i in range(24)}
    return out


def count(d: DaemonProcess) -> int:
    """Executions committed so far (0 while the database is not made yet)."""
    try:
        with raw_db(d) as conn:
            return int(conn.execute("SELECT count(*) FROM executions").fetchone()[0])
    except Exception:
        return 0


@pytest.mark.both_stores
@pytest.mark.parametrize("cycle", range(CYCLES))
def test_kill9_mid_import_of_many_sessions_then_reimport_is_exact(
    tmp_path: Path, cycle: int, store_url: str | None
) -> None:
    source = tmp_path / "projects"
    source.mkdir()
    expected = sessions(source)
    env = {"ALP_STORE_URL": store_url} if store_url else {}
    with running_daemon(tmp_path, extra_env=env) as d:

        def run_import() -> None:
            with contextlib.suppress(DaemonUnreachable, OSError):
                d.call("history/import", {"runtime": "claude", "path": str(source)})

        importer = threading.Thread(target=run_import, daemon=True)
        importer.start()
        deadline = time.monotonic() + 60
        while count(d) == 0 and time.monotonic() < deadline:
            time.sleep(0.01 * (1 + cycle % 3))
        d.kill9()
        importer.join(10)
        written = count(d)
        assert 0 < written < SESSIONS, "the import finished before the kill; make it bigger"
        # the restart after the kill has taken 15 s on PostgreSQL on a loaded 2-core machine
        # (load 19): longer than the harness's default (docs/many-machines.md, weak)
        d.start(timeout=RESTART_TIMEOUT)
        result = d.call("history/import", {"runtime": "claude", "path": str(source)})
        assert isinstance(result, dict)
        assert result["imported"] + result["updated"] == SESSIONS
        with raw_db(d) as conn:
            executions = conn.execute(
                "SELECT native_session_id, history_level FROM executions"
            ).fetchall()
            entries = conn.execute(
                "SELECT e.native_session_id, h.native_id, h.text FROM history_entries h "
                "JOIN executions e ON e.id = h.execution_id"
            ).fetchall()
            cursors = conn.execute("SELECT path, consumed FROM history_cursors").fetchall()
    assert sorted(r[0] for r in executions) == sorted(expected)
    assert {r[1] for r in executions} == {"complete"}
    assert len(entries) == len({r[1] for r in entries}) == SESSIONS * 24
    for session, prefixes in expected.items():
        stored = {" ".join(r[2].split()[:2]) for r in entries if r[0] == session}
        assert stored == prefixes, session
    assert all(consumed == Path(path).stat().st_size for path, consumed in cursors)
