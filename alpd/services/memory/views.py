"""Memories as the wire shows them, and the chain check every read by id goes through."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from alpd.domain.memory.record import MemoryVersion, verify_chain, version_status
from alpd.domain.threads.context import ContextLine, Snapshot
from alpd.errors import InvalidArgument, MemoryNotFound, MemoryTampered
from alpd.store import memory as memories
from alpd.store.db import Tx
from alpd.store.memory import HeadRow, ProposalRow
from protocol import messages as m

Chain = list[tuple[MemoryVersion, str]]


def memory_of(head: HeadRow) -> m.Memory:
    return m.Memory(
        id=head.id,
        kind=head.kind,  # type: ignore[arg-type]
        scope=head.scope,  # type: ignore[arg-type]
        text=head.text,
        status=head.status,  # type: ignore[arg-type]
        version=head.version,
        digest=head.digest,
        confirmed_at=head.confirmed_at,
        created_at=head.created_at,
        updated_at=head.updated_at,
        workspace=head.workspace,
        thread_id=head.thread_id,
        file_path=head.file_path,
    )


def versions_of_chain(chain: Chain) -> list[m.MemoryVersion]:
    newest = len(chain)
    return [
        m.MemoryVersion(
            version=version.version,
            text=version.text,
            status=version_status(version, newest),
            change=version.change,
            at=version.at,
            confirmed_at=version.confirmed_at,
            digest=digest,
            provenance=msgspec.convert(msgspec.to_builtins(version.provenance), m.MemoryProvenance),
            previous_digest=version.previous_digest,
        )
        for version, digest in chain
    ]


def proposal_of(row: ProposalRow) -> m.MemoryProposal:
    title = row.thread_title or "(untitled)"
    return m.MemoryProposal(
        id=row.id,
        thread_id=row.thread_id,
        execution_id=row.execution_id,
        workspace=row.workspace,
        scope=row.scope,  # type: ignore[arg-type]
        kind=row.kind,  # type: ignore[arg-type]
        text=row.text,
        status=row.status,  # type: ignore[arg-type]
        proposed_at=row.proposed_at,
        origin=f"proposed by run {row.execution_id} of thread {title!r} ({row.thread_id})",
        thread_title=row.thread_title,
        file_path=row.file_path,
        decided_at=row.decided_at,
        memory_id=row.memory_id,
    )


def check_chain(head: HeadRow, chain: Chain) -> None:
    """MEMORY_TAMPERED unless `chain` verifies and its newest version is `head`'s."""
    newest = verify_chain([v for v, _ in chain], [d for _, d in chain])
    last = chain[-1][0]
    if newest != head.digest or last.version != head.version or last.status != head.status:
        raise MemoryTampered(
            f"memory {head.id}'s listing does not match its newest version: it was changed "
            "outside alp; `alp memory retract` takes it out of use",
            memoryId=head.id,
            version=head.version,
        )


async def load_verified(tx: Tx, memory_id: str, owner_uid: int) -> tuple[HeadRow, Chain]:
    """The memory and its verified chain (MEMORY_NOT_FOUND, MEMORY_TAMPERED)."""
    head = await memories.head_of(tx, memory_id, owner_uid)
    if head is None:
        raise MemoryNotFound(
            f"no memory {memory_id!r} of yours; `alp memory list --all` lists them",
            id=memory_id,
        )
    chain = (await memories.versions_of(tx, [memory_id]))[memory_id]
    check_chain(head, chain)
    return head, chain


def verified(heads: Sequence[HeadRow], chains: dict[str, Chain]) -> tuple[list[HeadRow], list[str]]:
    """`heads` whose chains verify, and the ids of the others."""
    good: list[HeadRow] = []
    bad: list[str] = []
    for head in heads:
        try:
            check_chain(head, chains.get(head.id, []))
        except MemoryTampered:
            bad.append(head.id)
        else:
            good.append(head)
    return good, bad


def pinned_lines(snapshot: Snapshot) -> list[tuple[str, ContextLine]]:
    """The pinned lines in the order `alp thread context` numbers them (1 = first)."""
    lines: list[tuple[str, ContextLine]] = []
    if snapshot.objective is not None:
        lines.append(("objective", snapshot.objective))
    for kind, group in (
        ("decision", snapshot.decisions),
        ("constraint", snapshot.constraints),
        ("open-item", snapshot.open_items),
        ("next-action", snapshot.next_actions),
    ):
        lines += [(kind, line) for line in group]
    return lines


def pick_line(snapshot: Snapshot, pin: str) -> tuple[str, ContextLine]:
    """The line `pin` names: its number, its id, or a unique prefix of its id."""
    lines = pinned_lines(snapshot)
    if pin.isdigit():
        number = int(pin)
        if 1 <= number <= len(lines):
            return lines[number - 1]
    else:
        found = [(k, line) for k, line in lines if line.id.startswith(pin)]
        exact = [(k, line) for k, line in found if line.id == pin]
        if len(exact) == 1 or len(found) == 1:
            return (exact or found)[0]
    raise InvalidArgument(
        f"no pinned line {pin!r} in the thread's context (revision {snapshot.revision}, "
        f"{len(lines)} lines): `alp thread context THREAD` numbers them",
        field="pin",
        lines=len(lines),
    )


__all__ = [
    "Chain",
    "check_chain",
    "load_verified",
    "memory_of",
    "pick_line",
    "pinned_lines",
    "proposal_of",
    "verified",
    "versions_of_chain",
]
