"""What a diff between two checkpoint trees says, read from git's `-z` output (pure).

`parse_raw` reads `git diff-tree -r -z --no-renames --raw A B`: each change is
`:<mode A> <mode B> <sha A> <sha B> <status>` NUL `<path>` NUL. `restore_plan` turns the
changes from the current tree (A) to the target tree (B) into what a restore does, in order:
every path of A missing from B is deleted, then every path of B that differs (or is missing)
in A is written with B's bytes and mode. A nested repository (a gitlink, mode 160000) is never
touched: it is listed as skipped. `parse_numstat` reads `git diff-tree -r -z --numstat`
(`-` counts for a binary file).
"""

from __future__ import annotations

from typing import Final, Literal

import msgspec

__all__ = [
    "FileChange",
    "LineCounts",
    "RawChange",
    "RestoreStep",
    "parse_numstat",
    "parse_raw",
    "restore_plan",
]

GITLINK: Final = "160000"
Action = Literal["write", "delete", "skip"]


class RawChange(msgspec.Struct, frozen=True):
    path: str
    #: git's letter: A added, D deleted, M modified, T type changed
    status: str
    mode_before: str
    mode_after: str


class RestoreStep(msgspec.Struct, frozen=True):
    path: str
    action: Action
    #: `created` (a file the target does not have), `modified`, `deleted` (gone since), or
    #: `nested-repository` for a skipped gitlink
    why: str


class LineCounts(msgspec.Struct, frozen=True):
    added: int | None
    deleted: int | None


class FileChange(msgspec.Struct, frozen=True):
    path: str
    status: str
    added: int | None = None
    deleted: int | None = None


def parse_raw(output: bytes) -> list[RawChange]:
    fields = output.split(b"\0")
    changes: list[RawChange] = []
    index = 0
    while index + 1 < len(fields):
        head = fields[index].decode()
        if not head.startswith(":"):
            index += 1
            continue
        parts = head[1:].split(" ")
        if len(parts) < 5:
            raise ValueError(f"not a raw diff line: {head!r}")
        path = fields[index + 1].decode("utf-8", "surrogateescape")
        changes.append(RawChange(path, parts[4][:1], parts[0], parts[1]))
        index += 2
    return changes


def restore_plan(changes: list[RawChange]) -> list[RestoreStep]:
    """What restoring the target tree does, deletes first (module docstring)."""
    deletes: list[RestoreStep] = []
    writes: list[RestoreStep] = []
    for change in changes:
        if GITLINK in (change.mode_before, change.mode_after):
            writes.append(RestoreStep(change.path, "skip", "nested-repository"))
        elif change.status == "A":
            writes.append(RestoreStep(change.path, "write", "deleted"))
        elif change.status == "D":
            deletes.append(RestoreStep(change.path, "delete", "created"))
        else:
            writes.append(RestoreStep(change.path, "write", "modified"))
    return deletes + writes


def parse_numstat(output: bytes) -> dict[str, LineCounts]:
    counts: dict[str, LineCounts] = {}
    for record in output.split(b"\0"):
        if not record:
            continue
        added, deleted, path = record.decode("utf-8", "surrogateescape").split("\t", 2)
        counts[path] = LineCounts(
            None if added == "-" else int(added), None if deleted == "-" else int(deleted)
        )
    return counts
