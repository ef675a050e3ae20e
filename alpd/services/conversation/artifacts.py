"""Files a handoff points at: checked and fingerprinted where they are, never copied.

Each path must be absolute and, with its symlinks resolved, a regular file inside one of the
source's workspaces (so a handoff cannot point the target at `~/.ssh/id_ed25519`). Its size
and sha256 are read at send time, so the target can tell whether the file changed since.
Reading happens in a worker thread: a large file does not stall the daemon's loop.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Sequence
from typing import Final

import anyio

from alpd.domain.conversation.handoff import Artifact, artifact_inside
from alpd.errors import InvalidArgument

CHUNK_BYTES: Final = 1024 * 1024


def _describe(path: str, roots: Sequence[str]) -> Artifact:
    real = os.path.realpath(path)
    real_roots = [os.path.realpath(root) for root in roots]
    if not artifact_inside(real, real_roots):
        raise InvalidArgument(
            f"artifact {path} is outside the source thread's workspace "
            f"({', '.join(real_roots)}); a handoff points only at files of its own work",
            path=path,
            workspaces=real_roots,
        )
    try:
        # O_NONBLOCK: a FIFO put where a file was expected must not hang the worker.
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise InvalidArgument(
            f"artifact {path} cannot be read: {exc.strerror}", path=path
        ) from None
    with open(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise InvalidArgument(f"artifact {path} is not a regular file", path=path)
        digest = hashlib.sha256()
        while chunk := f.read(CHUNK_BYTES):
            digest.update(chunk)
    return Artifact(path=real, size=info.st_size, sha256=digest.hexdigest())


async def describe_artifacts(paths: Sequence[str], roots: Sequence[str]) -> list[Artifact]:
    """Each path's resolved location, size and sha256 (INVALID_ARGUMENT for a bad one)."""
    described = []
    for path in dict.fromkeys(paths):
        described.append(await anyio.to_thread.run_sync(_describe, path, roots))
    return described


__all__ = ["describe_artifacts"]
