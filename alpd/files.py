"""Files alp writes outside SQLite: private (0600), written whole or not at all."""

from __future__ import annotations

import os
from pathlib import Path


def write_private_file(path: Path, text: str) -> None:
    """temp → fsync → rename, so a reader never sees half a file, even after a crash."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        data = memoryview(text.encode())
        while data:
            data = data[os.write(fd, data) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temp, path)
