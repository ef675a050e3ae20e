"""`thread/diff` (what a root changed in the files) and `thread/restore` (the workspace put
back to before a root), and the checkpoints' line of `daemon/ps`."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from protocol.messages.base import Wire

__all__ = [
    "CheckpointsState",
    "DiffFile",
    "RestoreChange",
    "SkippedFile",
    "ThreadDiffParams",
    "ThreadDiffResult",
    "ThreadRestoreParams",
    "ThreadRestoreResult",
]

#: a root's sequence in its thread (`--root N`)
RootNumber = Annotated[int, msgspec.Meta(ge=1, le=2**53)]
#: how much patch text one answer carries at most (1 MiB; the default is 256 KiB)
PatchBytes = Annotated[int, msgspec.Meta(ge=0, le=1024 * 1024)]


class ThreadDiffParams(Wire):
    thread_id: str
    #: the root (default: the thread's last root with a checkpoint)
    root: RootNumber | None = None
    #: the patch text, cut at this many bytes (0: the file list only)
    max_patch_bytes: PatchBytes = 256 * 1024


class SkippedFile(Wire):
    """A file a checkpoint left out: `large` (over max_file_bytes), `nested-repository`,
    `unreadable`."""

    path: str
    reason: str
    bytes: int | None = None


class DiffFile(Wire):
    path: str
    #: git's letter: A added, D deleted, M modified, T type changed
    status: str
    #: lines added and deleted (none for a binary file)
    added: int | None = None
    deleted: int | None = None


class ThreadDiffResult(Wire):
    thread_id: str
    #: `3` for root #3, `restore-1` for a file restore
    step: str
    workspace: str
    files: list[DiffFile]
    patch: str = ""
    patch_truncated: bool = False
    execution_id: str | None = None
    root: int | None = None
    #: the checkpoint commits (in alp's shadow repository, not the workspace's)
    pre: str | None = None
    post: str | None = None
    #: the root has not ended yet: the diff is against the files as they are now
    running: bool = False
    #: files the checkpoints left out (before or after)
    skipped: list[SkippedFile] = msgspec.field(default_factory=list)
    skipped_more: int = 0


class ThreadRestoreParams(Wire):
    thread_id: str
    #: put the files back to before this root (default: the last step, a restore included:
    #: what `alp thread undo --files` does)
    root: RootNumber | None = None
    #: restore even if the files changed since that step ended (their changes are lost,
    #: but checkpointed: this restore can be undone)
    force: bool = False
    #: only list what it would change
    dry_run: bool = False


class RestoreChange(Wire):
    path: str
    #: `write` (the bytes before the step), `delete` (created since), `skip` (left alone)
    action: Literal["write", "delete", "skip"]
    #: `created`, `modified`, `deleted`, `nested-repository`
    why: str


class ThreadRestoreResult(Wire):
    thread_id: str
    #: the step undone: `3` (root #3) or `restore-1`
    undone: str
    workspace: str
    changes: list[RestoreChange]
    dry_run: bool = False
    #: this restore's own step, which `alp thread undo --files` takes back (not for a dry run)
    step: str | None = None
    #: how many changes were left out of `changes` (the first 1,000 are listed)
    changes_more: int = 0


class CheckpointsState(Wire):
    """The shadow repositories alp keeps (`daemon/ps`)."""

    enabled: bool
    bytes: int = 0
    workspaces: int = 0
    entries: int = 0
    #: per workspace
    max_bytes: int = 0
    keep_roots: int = 0
    last_gc_at: str | None = None
    #: where they are
    path: str | None = None
