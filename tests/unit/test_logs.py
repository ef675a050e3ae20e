"""A log write never raises into the daemon (issue 21, point 8): lines that cannot be written
are dropped and counted, and the count is logged once writing works again."""

from __future__ import annotations

import json
import os
from pathlib import Path

import structlog

from alpd.logs import SafeStream


def test_a_write_to_a_full_device_is_swallowed_and_counted() -> None:
    fd = os.open("/dev/full", os.O_WRONLY)
    try:
        stream = SafeStream(fd, json=True)
        for i in range(3):
            assert stream.write(f"line {i}\n") == len(f"line {i}\n")
        stream.flush()
        assert stream.lost_lines == 3 and stream.last_error == "ENOSPC"
        structlog.WriteLogger(file=stream).msg("through structlog")  # no exception either
        assert stream.lost_total == 4
    finally:
        os.close(fd)


def test_writing_resumes_with_the_count_of_lost_lines(tmp_path: Path) -> None:
    log = tmp_path / "alpd.log"
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    full = os.open("/dev/full", os.O_WRONLY)
    saved = os.dup(fd)
    try:
        stream = SafeStream(fd, json=True)
        stream.write('{"event": "first"}\n')
        os.dup2(full, fd)  # the disk fills up
        stream.write('{"event": "lost 1"}\n')
        stream.write('{"event": "lost 2"}\n')
        os.dup2(saved, fd)  # space comes back
        stream.write('{"event": "after"}\n')
    finally:
        os.close(fd)
        os.close(full)
        os.close(saved)
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [line["event"] for line in lines] == ["first", "log_lines_lost", "after"]
    assert lines[1]["count"] == 2 and lines[1]["error"] == "ENOSPC"


def test_a_closed_pipe_is_swallowed() -> None:
    read, write = os.pipe()
    os.close(read)
    try:
        stream = SafeStream(write, json=False)
        stream.write("nobody reads this\n")
        assert stream.lost_lines == 1 and stream.last_error == "EPIPE"
    finally:
        os.close(write)
