"""Files alp touches outside SQLite: written whole or not at all, with the mode asked for;
read only when they are regular files.

A transcript path comes from a runtime, a config file or a client: it may name a FIFO (whose
open() waits for a writer forever, taking a worker thread and then SIGTERM's clean exit with
it), a device or a socket. `open_regular` opens without blocking and checks what it opened.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path
from typing import BinaryIO


class NotARegularFile(OSError):
    """The path names a FIFO, a device, a socket or a directory, which alp never reads."""


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """`path` opened for reading in binary, or NotARegularFile (an OSError) if it is not a
    regular file. Never blocks: O_NONBLOCK makes opening a FIFO return at once."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotARegularFile(errno.EINVAL, "not a regular file", os.fspath(path))
        # Reads of a regular file never wait on O_NONBLOCK either; clear it all the same so
        # the file object behaves as a plain one.
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def write_atomically(path: Path, text: str, *, mode: int) -> Path:
    """temp → fsync → rename, so a reader never sees half a file, even after a crash.

    The temporary file is unique in `path`'s directory and removed if anything fails.
    """
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fchmod(out.fileno(), mode)
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return path


def write_private_file(path: Path, text: str) -> Path:
    """A file only its owner may read (0600), written atomically."""
    return write_atomically(path, text, mode=0o600)


def fsync_dir(directory: Path) -> None:
    """Make the renames into `directory` themselves durable."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
