"""Checkpoint entries: their ref names, the note each commit carries, what garbage collection
drops (pure).

An *entry* is one step that changed a workspace, with the tree before it (`pre`) and after it
(`post`): a root of a thread (step `"3"` for root #3) or a file restore (step `"restore-2"`).
Its refs are `refs/alp/<thread>/<step>/{pre,post}` in the workspace's shadow repository.

Each checkpoint commit's message is one line a person can read, a blank line, then the note
(JSON): thread, step, phase, when, how long it took, and the files it skipped.

Retention, in the order applied (`expired`): entries older than `keep_days` go; of the rest,
only the newest `keep_roots` stay. Past the size cap (`over_cap`), the oldest remaining go
until half of them are left, the newest always kept — the caller measures again after its
`git gc` and asks again while the repository is still over.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Final, Literal

import msgspec

__all__ = [
    "REF_ROOT",
    "Entry",
    "Note",
    "Phase",
    "Skipped",
    "cap_skipped",
    "decode_note",
    "encode_note",
    "expired",
    "over_cap",
    "parse_ref",
    "ref_of",
    "restore_step",
    "root_step",
]

Phase = Literal["pre", "post"]
REF_ROOT: Final = "refs/alp/"
#: a thread id and a step are ref-safe words: no `/`, no `..`, nothing git refuses in a ref
_WORD = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
_REF = re.compile(r"^refs/alp/([A-Za-z0-9_-]+)/(\d+|restore-\d+)/(pre|post)$")
#: how many skipped files a note names; the rest are counted
NOTE_SKIPPED_CAP: Final = 100


class Skipped(msgspec.Struct, frozen=True):
    path: str
    #: `large` (over max_file_bytes), `nested-repository` (a directory with its own .git),
    #: `unreadable` (git could not read it)
    reason: str
    bytes: int | None = None


class Note(msgspec.Struct, frozen=True, kw_only=True):
    thread_id: str
    step: str
    phase: Phase
    at: str
    workspace: str
    seconds: float = 0.0
    skipped: tuple[Skipped, ...] = ()
    skipped_more: int = 0


class Entry(msgspec.Struct, frozen=True):
    """One step's checkpoints as found in a shadow repository."""

    thread_id: str
    step: str
    #: the newest commit time of its refs (seconds since the epoch)
    time: int
    refs: tuple[str, ...]
    #: the newest note's time (ISO, milliseconds): orders steps taken within one second
    at: str = ""


def root_step(sequence: int) -> str:
    return str(sequence)


def restore_step(number: int) -> str:
    return f"restore-{number}"


def ref_of(thread_id: str, step: str, phase: Phase) -> str:
    if not _WORD.match(thread_id) or not _WORD.match(step):
        raise ValueError(f"not a checkpoint name: {thread_id!r} {step!r}")
    return f"{REF_ROOT}{thread_id}/{step}/{phase}"


def parse_ref(ref: str) -> tuple[str, str, Phase] | None:
    """(thread, step, phase) of a checkpoint ref; None for any other ref."""
    match = _REF.match(ref)
    if match is None:
        return None
    phase: Phase = "pre" if match.group(3) == "pre" else "post"
    return match.group(1), match.group(2), phase


def encode_note(note: Note) -> str:
    head = f"alp checkpoint: thread {note.thread_id} step {note.step} {note.phase}"
    return f"{head}\n\n{msgspec.json.encode(note).decode()}\n"


def decode_note(message: str) -> Note | None:
    """The note of a checkpoint commit's message (None when it has none or it is broken)."""
    _, _, body = message.partition("\n\n")
    try:
        return msgspec.json.decode(body.strip().encode(), type=Note)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def cap_skipped(skipped: Sequence[Skipped]) -> tuple[tuple[Skipped, ...], int]:
    """The skipped files a note names, and how many more there were."""
    return tuple(skipped[:NOTE_SKIPPED_CAP]), max(0, len(skipped) - NOTE_SKIPPED_CAP)


def expired(entries: Iterable[Entry], *, keep_roots: int, keep_days: int, now: int) -> list[Entry]:
    """The entries retention drops: older than `keep_days`, then all but the newest
    `keep_roots` (module docstring)."""
    newest_first = sorted(entries, key=lambda e: (e.time, e.at, e.thread_id, e.step), reverse=True)
    horizon = now - keep_days * 86_400
    young = [e for e in newest_first if e.time >= horizon]
    old = [e for e in newest_first if e.time < horizon]
    return old + young[keep_roots:]


def over_cap(entries: Iterable[Entry]) -> list[Entry]:
    """The oldest half of `entries` (the newest one always stays): what goes when the
    repository is over its size cap."""
    newest_first = sorted(entries, key=lambda e: (e.time, e.at, e.thread_id, e.step), reverse=True)
    keep = max(1, len(newest_first) // 2)
    return newest_first[keep:]
