"""What a restore does to the workspace itself, and which workspaces are checkpointed:
deletes stay inside the workspace once every symlink is followed, and a directory is never
removed unless a deleted file left it empty (blocking functions: run in a worker thread)."""

from __future__ import annotations

import os

from alpd.domain.checkpoints.changes import RestoreStep

__all__ = ["checkpointable", "delete_created"]


def checkpointable(workspace: str) -> bool:
    """Not `/`, not the home directory itself: a root there would copy a whole disk."""
    real = os.path.realpath(workspace)
    return real != "/" and real != os.path.realpath(os.path.expanduser("~"))


def _inside(workspace: str, path: str) -> bool:
    """Whether `path` (relative to the workspace) stays in it once every symlink of its
    directories is followed: nothing outside the workspace is ever deleted."""
    top = os.path.realpath(workspace)
    parent = os.path.realpath(os.path.join(top, os.path.dirname(path)))
    return parent == top or parent.startswith(top + os.sep)


def delete_created(workspace: str, plan: list[RestoreStep]) -> None:
    """Delete the files the plan says were created after the checkpoint, then the
    directories they leave empty (blocking: run in a worker thread)."""
    emptied: set[str] = set()
    for step in plan:
        if step.action != "delete" or not _inside(workspace, step.path):
            continue
        full = os.path.join(workspace, step.path)
        try:
            if os.path.isdir(full) and not os.path.islink(full):
                continue
            os.unlink(full)
        except FileNotFoundError:
            pass
        emptied.add(os.path.dirname(step.path))
    for folder in sorted(emptied, key=len, reverse=True):
        while folder:
            try:
                os.rmdir(os.path.join(workspace, folder))
            except OSError:
                break
            folder = os.path.dirname(folder)
