"""Files alp writes outside SQLite: written whole or not at all, with the mode asked for."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


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
