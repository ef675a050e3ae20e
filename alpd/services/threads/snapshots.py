"""Reading the digest-chained snapshots and the checkpoints of executions, verified (the SQL,
and the writers, are `alpd.store.threads.snapshots`).

Every read verifies: the bytes match the stored digest, the stored previous digest matches
the revision before, and the thread row's context revision names the newest snapshot.
Any mismatch is THREAD_CONTEXT_TAMPERED (invariant 3), wherever the snapshot is read.
"""

from __future__ import annotations

import msgspec

from alpd.domain.threads.context import (
    Checkpoint,
    CompactionRecord,
    Snapshot,
    decode_snapshot,
    genesis,
    snapshot_bytes,
    verify_link,
    verify_snapshot,
)
from alpd.domain.threads.projector import listed
from alpd.domain.threads.steering import RootMark, verify_steps
from alpd.errors import ThreadContextTampered, ThreadExecutionBindingMismatch
from alpd.services.runs.rows import verified_policy
from alpd.store.db import Tx
from alpd.store.threads.snapshots import (
    SnapshotRow,
    compaction_rows,
    root_bindings,
    snapshot_and_previous,
    snapshots_upto,
    stored_checkpoint,
    thread_roots,
)
from alpd.store.threads.steps import load_steps

_checkpoint_decoder = msgspec.json.Decoder(Checkpoint)
_compaction_decoder = msgspec.json.Decoder(CompactionRecord)


async def load_compactions(tx: Tx, thread_id: str, upto: int) -> list[CompactionRecord]:
    """Every full compaction record of the thread up to revision `upto`, oldest first, each
    checked against the bounded copy its (verified, digest-chained) snapshot holds:
    THREAD_CONTEXT_TAMPERED when a record is unreadable, has lost lines, or disagrees."""
    records = []
    for row in await compaction_rows(tx, thread_id, upto):
        try:
            record = _compaction_decoder.decode(row.body)
            kept = decode_snapshot(row.snapshot).compactions
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise _compaction_tampered(thread_id, row.revision) from exc
        whole = (
            len(record.dropped) == record.dropped_count
            and len(record.truncated) == record.truncated_count
        )
        if not (whole and kept and kept[-1] == listed(record) and record.revision == row.revision):
            raise _compaction_tampered(thread_id, row.revision)
        records.append(record)
    return records


def _compaction_tampered(thread_id: str, revision: int) -> ThreadContextTampered:
    return ThreadContextTampered(
        f"the compaction record of snapshot {revision} of thread {thread_id} does not match "
        "the snapshot",
        threadId=thread_id,
        revision=revision,
    )


async def load_snapshot(tx: Tx, thread_id: str, revision: int) -> tuple[Snapshot, str]:
    """Snapshot `revision` of the thread, verified against its digest and its predecessor."""
    rows = await snapshot_and_previous(tx, thread_id, revision)
    current = rows[-1] if rows and rows[-1].revision == revision else None
    if current is None:
        raise ThreadContextTampered(
            f"snapshot {revision} of thread {thread_id} is missing",
            threadId=thread_id,
            revision=revision,
        )
    expected_previous = rows[0].digest if len(rows) == 2 else None
    if revision > 0 and expected_previous is None:
        raise ThreadContextTampered(
            f"snapshot {revision - 1} of thread {thread_id} is missing",
            threadId=thread_id,
            revision=revision - 1,
        )
    if current.previous_digest != expected_previous:
        raise ThreadContextTampered(
            f"snapshot {revision} of thread {thread_id} is not chained to its predecessor",
            threadId=thread_id,
            revision=revision,
        )
    try:
        snapshot = verify_snapshot(current.body, current.digest, expected_previous)
    except ThreadContextTampered as exc:
        exc.data.setdefault("threadId", thread_id)
        raise
    if snapshot.thread_id != thread_id or snapshot.revision != revision:
        raise ThreadContextTampered(
            f"snapshot {revision} names another thread or revision",
            threadId=thread_id,
            revision=revision,
        )
    digests = {revision: str(current.digest)}
    if expected_previous is not None:
        digests[revision - 1] = expected_previous
    await check_bindings(tx, thread_id, digests)
    return snapshot, str(current.digest)


async def load_chain(tx: Tx, thread_id: str, upto: int) -> tuple[Snapshot, str]:
    """Snapshot `upto`, after verifying every link of the chain from revision 0 (which must be
    this thread's genesis) to it, every root of the thread against that chain (its policy
    re-hashed, its binding inside that policy naming a snapshot of this chain by the digest
    it has now), and the clears and undos against both (`verify_steps`: each revision is a
    root's projection or a step holding what the step says). What `continue`, `clear` and
    `undo` build on, and what `show`/`context` serve."""
    try:
        return await _verify_chain(tx, thread_id, upto)
    except ThreadContextTampered as exc:
        exc.data.setdefault("threadId", thread_id)
        raise


async def _verify_chain(tx: Tx, thread_id: str, upto: int) -> tuple[Snapshot, str]:
    previous: str | None = None
    rows = await snapshots_upto(tx, thread_id, upto)
    if [row.revision for row in rows] != list(range(upto + 1)):
        raise ThreadContextTampered(
            f"the snapshot chain of thread {thread_id} has a gap", threadId=thread_id
        )
    if rows[0].body != snapshot_bytes(genesis(thread_id)):
        raise ThreadContextTampered(
            f"snapshot 0 of thread {thread_id} is not its genesis", threadId=thread_id, revision=0
        )
    digests: dict[int, str] = {}
    for row in rows[:-1]:
        _check_link(row, previous, thread_id)
        link = verify_link(row.body, row.digest, previous)
        if (link.thread_id, link.revision) != (thread_id, row.revision):
            raise ThreadContextTampered(
                f"snapshot {row.revision} names another thread or revision",
                threadId=thread_id,
                revision=row.revision,
            )
        previous = digests[row.revision] = row.digest
    last = rows[-1]
    _check_link(last, previous, thread_id)
    head = verify_snapshot(last.body, last.digest, previous)
    if (head.thread_id, head.revision) != (thread_id, upto):
        raise ThreadContextTampered(
            f"snapshot {upto} names another thread or revision", threadId=thread_id, revision=upto
        )
    digests[upto] = last.digest
    roots = await check_roots(tx, thread_id, digests)
    steps = [record.step for record in await load_steps(tx, thread_id)]
    # Only the revisions a step wrote or restored are decoded: a thread never cleared or
    # undone pays two loops over integers.
    needed = {s.revision for s in steps} | {s.restored_revision or 0 for s in steps}
    snapshot_at = {r: decode_snapshot(rows[r].body) for r in needed if r <= upto}
    verify_steps(thread_id, upto, steps, roots, snapshot_at)
    return head, str(last.digest)


def _check_link(row: SnapshotRow, previous: str | None, thread_id: str) -> None:
    if row.previous_digest != previous:
        raise ThreadContextTampered(
            f"snapshot {row.revision} is not chained to its predecessor",
            threadId=thread_id,
            revision=row.revision,
        )


async def check_roots(tx: Tx, thread_id: str, chain: dict[int, str]) -> list[RootMark]:
    """Every root of the thread against the whole verified `chain` (revision → digest): its
    policy re-hashed (EXECUTION_POLICY_TAMPERED), its binding columns equal to the binding
    inside that policy (THREAD_EXECUTION_BINDING_MISMATCH), and that binding naming this
    thread and a revision of the chain whose digest is still the one the root read
    (THREAD_CONTEXT_TAMPERED otherwise). The roots, with the revision each opened on."""
    marks = []
    for root in await thread_roots(tx, thread_id):
        binding = verified_policy(root).binding
        if binding is None or binding.id != thread_id:
            raise ThreadExecutionBindingMismatch(
                f"root {root.id} of thread {thread_id} is not bound to it",
                threadId=thread_id,
                executionId=root.id,
            )
        if chain.get(binding.context_revision) != binding.context_digest:
            raise ThreadContextTampered(
                f"snapshot {binding.context_revision} of thread {thread_id} differs from "
                f"what root {root.id} read",
                threadId=thread_id,
                revision=binding.context_revision,
                root=root.id,
            )
        assert root.sequence is not None  # a thread's root has its place in it
        marks.append(
            RootMark(
                execution_id=root.id,
                sequence=root.sequence,
                opened_on=binding.context_revision,
                settled=root.status == "settled",
            )
        )
    return marks


async def check_bindings(tx: Tx, thread_id: str, digests: dict[int, str]) -> None:
    """Every root bound to one of these revisions recorded that revision's digest; a snapshot
    rewritten consistently (new bytes, new digest, intact link) still contradicts the
    immutable binding of the roots that read it."""
    for root in await root_bindings(tx, thread_id):
        stored = digests.get(root.context_revision)
        if stored is not None and stored != root.context_digest:
            raise ThreadContextTampered(
                f"snapshot {root.context_revision} of thread {thread_id} differs from "
                f"what root {root.id} read",
                threadId=thread_id,
                revision=root.context_revision,
                root=root.id,
            )


async def load_checkpoint(tx: Tx, execution_id: str) -> Checkpoint | None:
    """The execution's checkpoint, or None when it is missing or unreadable.

    A readable checkpoint whose digest no longer matches is returned as is: the projector
    sees it is broken and degrades (invariant 6).
    """
    stored = await stored_checkpoint(tx, execution_id)
    if stored is None:
        return None
    try:
        checkpoint = _checkpoint_decoder.decode(stored.body)
    except msgspec.DecodeError:
        return None
    if checkpoint.digest != stored.digest or checkpoint.execution_id != execution_id:
        # Two digests that disagree: keep the column's, so the projector sees a broken one.
        return msgspec.structs.replace(
            checkpoint, digest=str(stored.digest), execution_id=execution_id
        )
    return checkpoint
