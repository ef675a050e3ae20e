"""The transcript reader process (`alpd.services.history.read_process`): what it reads is what
reading
in alpd's own process gives; a worker that exits between requests is replaced; one that dies
during a request fails it by name; it is stopped when idle and on close."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import anyio
import pytest

from alpd.errors import HistoryReaderFailed
from alpd.services.history.chunks import Source, cwd_of, read_chunk
from alpd.services.history.read_process import IDLE_SECONDS, TranscriptReader
from alpd.services.history.read_worker import ReadFile
from alpd.store.history.sync import Cursor

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "runtimes"
CLAUDE = sorted((FIXTURES / "claude").glob("*.jsonl"))
CODEX = sorted((FIXTURES / "codex").rglob("rollout-*.jsonl"))


def read(reader: TranscriptReader, files: list[ReadFile]) -> list:  # type: ignore[type-arg]
    return anyio.run(reader.read, files)


def test_the_process_reads_what_alpd_would_read_itself() -> None:
    assert CLAUDE and CODEX
    files = [(path, "claude") for path in CLAUDE] + [(path, "codex") for path in CODEX]
    reader = TranscriptReader()
    try:
        results = read(
            reader,
            [ReadFile(f"exec_{n}", str(p), fmt, cwd=True) for n, (p, fmt) in enumerate(files)],
        )
    finally:
        reader.close()
    assert len(results) == len(files)
    for n, ((path, fmt), result) in enumerate(zip(files, results, strict=True)):
        here = read_chunk(f"exec_{n}", Source(str(path), fmt), Cursor("", str(path), fmt))
        assert result.error is None
        assert result.chunk == here
        assert result.cwd == cwd_of(path)
    assert any(result.chunk and result.chunk.rows for result in results)


def test_a_read_from_a_cursor_carries_on_from_it() -> None:
    path = max(CLAUDE, key=lambda p: p.stat().st_size)
    whole = read_chunk("exec_a", Source(str(path), "claude"), Cursor("", str(path), "claude"))
    middle = whole.rows[len(whole.rows) // 2].params["byte_offset"]
    cursor = Cursor("", str(path), "claude", consumed=middle, session_id=whole.session_id)
    reader = TranscriptReader()
    try:
        (result,) = read(
            reader, [ReadFile("exec_a", str(path), "claude", middle, whole.session_id)]
        )
    finally:
        reader.close()
    assert result.chunk == read_chunk("exec_a", Source(str(path), "claude"), cursor)
    assert result.chunk is not None and result.chunk.rows
    assert result.chunk.rows[0].params["byte_offset"] == middle


def test_a_file_it_cannot_read_says_why_and_the_others_are_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo.jsonl")
    reader = TranscriptReader()
    try:
        missing, fifo, good = read(
            reader,
            [
                ReadFile("exec_a", str(tmp_path / "gone.jsonl"), "claude"),
                ReadFile("exec_b", str(tmp_path / "fifo.jsonl"), "claude"),
                ReadFile("exec_c", str(CLAUDE[0]), "claude"),
            ],
        )
    finally:
        reader.close()
    assert missing.chunk is None and missing.error and "FileNotFoundError" in missing.error
    assert fifo.chunk is None and fifo.error and "NotARegularFile" in fifo.error
    assert good.error is None and good.chunk is not None


def test_a_worker_killed_between_requests_is_replaced() -> None:
    reader = TranscriptReader()
    try:
        read(reader, [ReadFile("exec_a", str(CLAUDE[0]), "claude")])
        first = reader.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        os.waitid(os.P_PID, first, os.WEXITED | os.WNOWAIT)
        (result,) = read(reader, [ReadFile("exec_a", str(CLAUDE[0]), "claude")])
        assert result.chunk is not None
        assert reader.pid not in (None, first)
    finally:
        reader.close()


def test_a_worker_that_dies_during_a_request_fails_it_by_name() -> None:
    # A worker that takes the request's header and dies, as a killed one would.
    dies = [sys.executable, "-c", "import sys; sys.stdin.buffer.read(4); sys.exit(3)"]
    reader = TranscriptReader(command=dies)
    with pytest.raises(HistoryReaderFailed) as failed:
        read(reader, [ReadFile("exec_a", str(CLAUDE[0]), "claude")])
    assert failed.value.name == "HISTORY_READER_FAILED"
    assert "exit status 3" in failed.value.message
    assert "run the import again" in failed.value.message
    assert reader.pid is None


def test_a_worker_that_cannot_start_fails_by_name(tmp_path: Path) -> None:
    reader = TranscriptReader(command=[str(tmp_path / "no-such-python")])
    with pytest.raises(HistoryReaderFailed, match="could not start"):
        read(reader, [ReadFile("exec_a", str(CLAUDE[0]), "claude")])


def test_an_idle_worker_is_stopped_and_a_busy_one_is_not() -> None:
    now = [1000.0]
    reader = TranscriptReader(clock=lambda: now[0])
    try:
        reader.stop_if_idle()  # nothing to stop
        read(reader, [ReadFile("exec_a", str(CLAUDE[0]), "claude")])
        pid = reader.pid
        now[0] += IDLE_SECONDS - 1
        assert not reader.idle()
        reader.stop_if_idle()
        assert reader.pid == pid
        now[0] += 1
        assert reader.idle()
        reader.stop_if_idle()
        assert reader.pid is None and not reader.idle()
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reaped: no zombie left behind
    finally:
        reader.close()


def test_close_stops_the_worker() -> None:
    reader = TranscriptReader()
    read(reader, [ReadFile("exec_a", str(CLAUDE[0]), "claude")])
    pid = reader.pid
    assert pid is not None
    reader.close()
    assert reader.pid is None
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    reader.close()  # twice is fine
