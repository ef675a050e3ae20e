"""Clear and undo: how a person steers a thread's context without destroying its record.

A *step* is a context revision written by a person instead of by a settling root. Both kinds
are revision n+1 of the chain like any projection (`previousDigest` = the head's digest), so
nothing is deleted and every older revision stays readable:

* **clear** — the new revision holds an empty working context: no objective, no lines, no
  outcomes, no compaction notes, not degraded (the content of genesis).
* **undo** — takes back the contribution of the *last undoable root*: the settled root with
  the highest sequence that is not undone yet and opened on or after the last clear. The new
  revision holds exactly the content of the revision that root opened on (its binding's
  `contextRevision`). Because every root opens on the head and a step is refused while a
  root runs, the head's content is always the result of the last undoable root (or of the
  last clear), so repeated undos walk back one root at a time. They stop at a clear: a root
  that opened before it can never be undone (`THREAD_NOTHING_TO_UNDO`).

*Content* is everything in a snapshot but `threadId`, `revision` and `previousDigest`.

History is never edited; its entries are labelled through the steps (`labels_of`):
`before-clear` — the entry's root opened before a clear of its thread; `undone` — its root's
contribution was undone. A labelled entry is kept and still searchable, but is never input
of a recap (`readable`).

`verify_steps` checks the steps against the verified chain: each step's revision holds what
the step says it holds, each undo took back the root these rules chose at that point
(replayed), no step sits where a settling root projected, and every revision above genesis
is either a step or the projection of a root that opened on the one before. (An undo back
to an empty context writes the same content as a clear; only its row says which it was.)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal, NoReturn

import msgspec

from alpd.domain.threads.context import Snapshot, genesis
from alpd.errors import ThreadContextTampered, ThreadNothingToUndo

StepKind = Literal["clear", "undo"]
HistoryLabel = Literal["before-clear", "undone"]
HISTORY_LABELS: Final[tuple[HistoryLabel, ...]] = ("before-clear", "undone")


@dataclass(frozen=True, slots=True)
class Step:
    """A context revision a person wrote: `revision` replaced `revision - 1` as the head."""

    kind: StepKind
    revision: int
    #: undo: the root whose contribution was taken back
    execution_id: str | None = None
    #: undo: the revision whose content the step restored (that root's opening revision)
    restored_revision: int | None = None


@dataclass(frozen=True, slots=True)
class RootMark:
    """What steering needs of a root: its place in the thread and the revision it opened on."""

    execution_id: str
    sequence: int
    opened_on: int
    settled: bool


def content_of(snapshot: Snapshot) -> Snapshot:
    """The snapshot with its place in the chain blanked: what clear and undo compare."""
    return msgspec.structs.replace(snapshot, thread_id="", revision=0, previous_digest=None)


def cleared_snapshot(head: Snapshot, head_digest: str) -> Snapshot:
    """Revision head+1 with an empty working context, chained to the head."""
    return msgspec.structs.replace(
        genesis(head.thread_id), revision=head.revision + 1, previous_digest=head_digest
    )


def restored_snapshot(head: Snapshot, head_digest: str, opened_on: Snapshot) -> Snapshot:
    """Revision head+1 holding the content of `opened_on`, chained to the head."""
    return msgspec.structs.replace(
        opened_on,
        thread_id=head.thread_id,
        revision=head.revision + 1,
        previous_digest=head_digest,
    )


def last_clear(steps: Iterable[Step]) -> int:
    """The revision of the newest clear; 0 (genesis) when the thread was never cleared."""
    return max((step.revision for step in steps if step.kind == "clear"), default=0)


def undone_roots(steps: Iterable[Step]) -> frozenset[str]:
    return frozenset(step.execution_id for step in steps if step.execution_id is not None)


def root_to_undo(roots: Iterable[RootMark], steps: Sequence[Step], thread_id: str) -> RootMark:
    """The root the next undo takes back (see the module docstring).

    THREAD_NOTHING_TO_UNDO when every settled root since the last clear is already undone."""
    floor = last_clear(steps)
    undone = undone_roots(steps)
    candidates = [
        root
        for root in roots
        if root.settled and root.opened_on >= floor and root.execution_id not in undone
    ]
    if not candidates:
        since = f"since the clear at revision {floor}" if floor else "in this thread"
        raise ThreadNothingToUndo(
            f"thread {thread_id} has no settled root to undo {since}; earlier revisions stay "
            f"readable with `alp thread context {thread_id} --rev N`",
            threadId=thread_id,
            clearedAt=floor or None,
        )
    return max(candidates, key=lambda root: root.sequence)


def labels_of(root: RootMark, steps: Iterable[Step]) -> tuple[HistoryLabel, ...]:
    """The labels of a root's history entries, in `HISTORY_LABELS` order."""
    steps = tuple(steps)
    labels: list[HistoryLabel] = []
    if any(step.kind == "clear" and step.revision > root.opened_on for step in steps):
        labels.append("before-clear")
    if root.execution_id in undone_roots(steps):
        labels.append("undone")
    return tuple(labels)


def readable(root: RootMark, steps: Iterable[Step]) -> bool:
    """Whether a recap may read this root's history: never cleared, never undone."""
    return not labels_of(root, steps)


def verify_steps(
    thread_id: str,
    head: int,
    steps: Sequence[Step],
    roots: Iterable[RootMark],
    snapshot_at: Mapping[int, Snapshot],
) -> None:
    """THREAD_CONTEXT_TAMPERED unless the steps agree with the chain up to `head`.

    `snapshot_at` maps at least every step's revision and every undo's restored revision to
    its (verified) snapshot. One pass over the steps in revision order, replaying which root
    each undo had to take back (a stack of the roots live since the last clear)."""
    roots = sorted(roots, key=lambda root: root.sequence)
    opened = {root.opened_on: root for root in roots}
    if len(opened) != len(roots):
        _tampered(thread_id, head, "two roots opened on one revision")
    stepped = {step.revision: step for step in steps if step.revision <= head}
    live: list[RootMark] = []
    waiting = iter(roots)
    pending = next(waiting, None)
    for revision in sorted(stepped):
        step = stepped[revision]
        if revision - 1 in opened:
            _tampered(thread_id, revision, "a step where a root projected")
        while pending is not None and pending.opened_on < revision:
            live.append(pending)
            pending = next(waiting, None)
        if step.kind == "clear":
            live.clear()
            expected = content_of(genesis(thread_id))
        else:
            due = live.pop() if live else None
            if due is None or (step.execution_id, step.restored_revision) != (
                due.execution_id,
                due.opened_on,
            ):
                _tampered(thread_id, revision, "an undo of a root that was not the last")
            expected = content_of(snapshot_at[due.opened_on])
        if content_of(snapshot_at[revision]) != expected:
            _tampered(thread_id, revision, f"not the content its {step.kind} wrote")
    for revision in range(1, head + 1):
        if revision not in stepped and revision - 1 not in opened:
            _tampered(thread_id, revision, "neither a step nor a root's projection")


def _tampered(thread_id: str, revision: int, reason: str) -> NoReturn:
    raise ThreadContextTampered(
        f"snapshot {revision} of thread {thread_id} is {reason}",
        threadId=thread_id,
        revision=revision,
        reason=reason,
    )
