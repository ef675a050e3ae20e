"""A small filesystem to fill, for the full-disk tests: a tmpfs mounted for one test (root
only; CI runs as root, and under CI=true a skip is a failure), and a filler file that takes
every free byte of it (deleting it gives the space back)."""

from __future__ import annotations

import contextlib
import os
import pwd
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["TMPFS_SIZE", "fill", "small_filesystem"]

TMPFS_SIZE = "8m"


@contextlib.contextmanager
def small_filesystem(size: str = TMPFS_SIZE, owner: str | None = None) -> Iterator[Path]:
    """A fresh tmpfs of `size`, its top owned by `owner` (root's if None), unmounted
    afterwards."""
    if os.geteuid() != 0:
        if os.environ.get("CI") == "true":
            pytest.fail("the disk-full test needs root to mount a tmpfs, and CI runs as root")
        pytest.skip("needs root to mount a small tmpfs")
    mount_point = Path(tempfile.mkdtemp(prefix="alp-full-"))
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, f"cannot mount a tmpfs: {done.stderr}"
    if owner is not None:
        entry = pwd.getpwnam(owner)
        os.chown(mount_point, entry.pw_uid, entry.pw_gid)
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)
        mount_point.rmdir()


def fill(directory: Path) -> Path:
    """A file holding every free byte of `directory`'s filesystem."""
    filler = directory / "filler"
    with filler.open("wb", buffering=0) as f:
        with contextlib.suppress(OSError):
            while True:
                f.write(b"\0" * 65536)
        with contextlib.suppress(OSError):
            while True:  # the last few bytes, one at a time
                f.write(b"\0")
    return filler
