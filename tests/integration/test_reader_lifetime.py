"""alpd's transcript reader process lives no longer than alpd: an import starts it, a stopping
alpd stops it, and an alpd killed with SIGKILL takes it along (its stdin closes)."""

from __future__ import annotations

from pathlib import Path

from polling import wait_for
from transcripts import FIXTURES, Claude

from alpd.testing.daemon import DaemonProcess, running_daemon


def children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found.update(int(c) for c in (task / "children").read_text().split())
        except OSError:
            continue  # a thread that ended meanwhile
    return found


def reader_of(d: DaemonProcess) -> int:
    (pid,) = [
        child
        for child in children(d.pid)
        if b"alpd.services.read_worker" in Path(f"/proc/{child}/cmdline").read_bytes()
    ]
    return pid


def gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"  # exited; its parent (dead too) no longer reaps it


def test_a_stopping_alpd_stops_its_reader(tmp_path: Path) -> None:
    with running_daemon(tmp_path) as d:
        d.call("history/import", {"runtime": "claude", "path": str(FIXTURES / "claude")})
        reader = reader_of(d)
        assert d.stop() == 0
    assert gone(reader)


def test_an_alpd_killed_with_sigkill_takes_its_reader_along(tmp_path: Path) -> None:
    with running_daemon(tmp_path) as d:
        d.call("history/import", {"runtime": "claude", "path": str(FIXTURES / "claude")})
        reader = reader_of(d)
        d.kill9()
        wait_for(lambda: gone(reader), timeout=10, what="the reader to exit")
        d.start()
        # The next import starts a reader of its own.
        claude = Claude()
        (tmp_path / "more").mkdir()
        (tmp_path / "more" / f"{claude.session}.jsonl").write_bytes(claude.prompt("after"))
        result = d.call("history/import", {"runtime": "claude", "path": str(tmp_path / "more")})
        assert isinstance(result, dict) and (result["imported"], result["added"]) == (1, 1)
        assert reader_of(d) != reader
