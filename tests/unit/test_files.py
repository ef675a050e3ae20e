"""alpd.files: reading only regular files, never blocking on what is not one."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import pytest

from alpd.files import NotARegularFile, open_regular


def opened_within(path: Path, seconds: float = 10.0) -> BaseException | bytes:
    """What open_regular(path) gave (its exception, or the bytes read), failing if it hangs."""
    outcome: list[BaseException | bytes] = []

    def attempt() -> None:
        try:
            with open_regular(path) as f:
                outcome.append(f.read())
        except BaseException as exc:
            outcome.append(exc)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"open_regular({path}) hung"
    return outcome[0]


def test_a_regular_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"x":1}\n')
    assert opened_within(path) == b'{"x":1}\n'


def test_a_fifo_without_a_writer_is_refused_at_once(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    os.mkfifo(path)
    refused = opened_within(path)
    assert isinstance(refused, NotARegularFile) and isinstance(refused, OSError)
    assert str(path) in str(refused)


def test_a_directory_and_a_device_are_refused(tmp_path: Path) -> None:
    assert isinstance(opened_within(tmp_path), OSError)
    assert isinstance(opened_within(Path("/dev/null")), NotARegularFile)


def test_a_socket_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.bind(str(path))
        assert isinstance(opened_within(path), OSError)


def test_a_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        open_regular(tmp_path / "nope")
