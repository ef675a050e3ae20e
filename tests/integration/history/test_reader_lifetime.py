"""alpd's transcript reader process lives no longer than alpd: an import starts it, a stopping
alpd stops it, and an alpd killed with SIGKILL takes it along (its stdin closes). A reader
killed during an import fails that import by name, and the next import completes it."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

from polling import wait_for
from transcripts import FIXTURES, Claude

from alpctl.client import Client, RpcError
from alpd.testing.daemon import DaemonProcess, running_daemon


def children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found.update(int(c) for c in (task / "children").read_text().split())
        except OSError:
            continue  # a thread that ended meanwhile
    return found


def readers(d: DaemonProcess) -> list[int]:
    found = []
    for child in children(d.pid):
        try:
            if b"alpd.services.history.read_worker" in Path(f"/proc/{child}/cmdline").read_bytes():
                found.append(child)
        except OSError:
            continue  # gone meanwhile
    return found


def reader_of(d: DaemonProcess) -> int:
    (pid,) = readers(d)
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


def test_a_reader_killed_mid_import_fails_it_by_name_and_the_next_import_completes(
    alpd: DaemonProcess, tmp_path: Path
) -> None:
    root = tmp_path / "projects"
    root.mkdir()
    sessions = {}
    output = "build output line\n" * 100
    for n in range(300):  # ~7 MiB: two batches
        claude = Claude()
        lines = [claude.prompt(f"task {n}")]
        for turn in range(10):
            lines += [
                claude.tool_call("Bash", {"command": f"make {turn}"}, f"toolu_{n}_{turn}"),
                claude.tool_result(output, f"toolu_{n}_{turn}"),
            ]
        (root / f"{claude.session}.jsonl").write_bytes(b"".join(lines))
        sessions[claude.session] = len(lines)
    stopped: list[int] = []

    def stop_the_reader() -> None:
        # Stopped, the reader holds the request alpd sent it (or the next one); killed, it
        # dies during that request.
        reader = wait_for(lambda: next(iter(readers(alpd)), None), what="a reader")
        os.kill(reader, signal.SIGSTOP)
        stopped.append(reader)

    killer = threading.Thread(target=stop_the_reader)
    killer.start()
    with alpd.client() as client:
        request = threading.Thread(
            target=lambda: failures.append(_import(client, root)), daemon=True
        )
        failures: list[str | None] = []
        request.start()
        killer.join()
        time.sleep(0.5)
        os.kill(stopped[0], signal.SIGKILL)
        request.join(60)
    assert failures == ["HISTORY_READER_FAILED"]
    again = alpd.call("history/import", {"runtime": "claude", "path": str(root)})
    assert isinstance(again, dict)
    assert {s["nativeSessionId"]: s["entries"] for s in again["sessions"]} == sessions


def _import(client: Client, root: Path) -> str | None:
    try:
        client.call("history/import", {"runtime": "claude", "path": str(root)})
    except RpcError as exc:
        return exc.name
    return None
