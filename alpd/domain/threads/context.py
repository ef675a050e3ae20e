"""Context types: pins, checkpoints, snapshots, and the digests that make them tamper-evident.

A *pin* is one line an execution asked to pass on (`alp context pin decision -- …`). The
pins of one execution form its *checkpoint*, whose digest covers the execution id and every
pin; a checkpoint whose digest no longer matches is treated as missing (projection degrades,
invariant 6). A *snapshot* is the Thread's context at one revision: immutable, every line
attributed to the execution that pinned it, chained to its predecessor by `previousDigest`
(invariant 3). How a checkpoint becomes the next snapshot is in `alpd.domain.threads.projector`.

Every type is a frozen Struct with camelCase wire names (`sourceExecutionId`,
`previousDigest`); the digest of a snapshot is sha256 over its RFC 8785 bytes
(`snapshot_bytes`), so any client can reproduce it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

import msgspec

from alpd.domain.canonical import canonical_json, digest_of, sha256_digest
from alpd.errors import InvalidArgument, ThreadContextTampered

PinKind = Literal["objective", "decision", "constraint", "open-item", "next-action", "resolve"]
PIN_KINDS: Final[tuple[PinKind, ...]] = (
    "objective",
    "decision",
    "constraint",
    "open-item",
    "next-action",
    "resolve",
)
OutcomeStatus = Literal[
    "completed", "failed", "cancelled", "interrupted", "timed-out", "budget-exceeded"
]
LINE_ID_PREFIX: Final = "ln_"


class Pin(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One line an execution pinned; `at` is an ISO-8601 time supplied by the caller."""

    kind: PinKind
    text: str
    at: str
    execution_id: str


class Checkpoint(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The pins of one execution, in the order they were made, with their digest."""

    execution_id: str
    pins: tuple[Pin, ...]
    digest: str


class ContextLine(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One attributed line of a snapshot; `id` is stable (see `line_id`)."""

    id: str
    text: str
    source_execution_id: str
    at: str


class ResolvedLine(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """An open item closed by a `resolve` pin, or a `resolve` that matched nothing.

    `matched=False` keeps the intent of a resolve whose item was never open here (or was
    dropped by compaction), attributed to the resolving execution, instead of losing it.
    """

    id: str
    text: str
    source_execution_id: str
    at: str
    resolved_by_execution_id: str
    resolved_at: str
    matched: bool


class OutcomeLine(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """How one root ended, one line per execution."""

    id: str
    source_execution_id: str
    status: OutcomeStatus
    summary: str | None
    exit_code: int | None
    at: str


class DroppedLine(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """Provenance of a line removed (or shortened) by compaction."""

    kind: str
    id: str
    source_execution_id: str


class CompactionRecord(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One compaction at `revision`; `dropped` may list fewer lines than `dropped_count`."""

    revision: int
    reason: str
    bytes_before: int
    bytes_after: int
    dropped_count: int
    dropped: tuple[DroppedLine, ...]
    truncated_count: int
    truncated: tuple[DroppedLine, ...]


class Snapshot(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The Thread's context at one revision; revision 0 is the empty genesis."""

    thread_id: str
    revision: int
    objective: ContextLine | None
    decisions: tuple[ContextLine, ...]
    constraints: tuple[ContextLine, ...]
    open_items: tuple[ContextLine, ...]
    next_actions: tuple[ContextLine, ...]
    resolved: tuple[ResolvedLine, ...]
    outcomes: tuple[OutcomeLine, ...]
    previous_digest: str | None
    compactions: tuple[CompactionRecord, ...]
    degraded: bool


class Outcome(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The settled result of a root, as recorded by `execution/settle`."""

    execution_id: str
    status: OutcomeStatus
    summary: str | None
    exit_code: int | None
    at: str


def line_id(kind: str, text: str, source_execution_id: str) -> str:
    """Deterministic short id of a line: digest of kind, text and source (48 bits)."""
    return LINE_ID_PREFIX + digest_of([kind, text, source_execution_id])[7:19]


def checkpoint_digest(execution_id: str, pins: Sequence[Pin]) -> str:
    """Digest of a checkpoint's content (everything but the digest itself)."""
    return digest_of({"executionId": execution_id, "pins": [msgspec.to_builtins(p) for p in pins]})


def make_checkpoint(execution_id: str, pins: Sequence[Pin] = ()) -> Checkpoint:
    """A checkpoint of `pins` with its digest computed."""
    for pin in pins:
        _check_pin(pin)
    return Checkpoint(
        execution_id=execution_id,
        pins=tuple(pins),
        digest=checkpoint_digest(execution_id, pins),
    )


def add_pin(checkpoint: Checkpoint, pin: Pin) -> Checkpoint:
    """A new checkpoint with `pin` appended; the old one is not modified."""
    return make_checkpoint(checkpoint.execution_id, (*checkpoint.pins, pin))


def checkpoint_is_intact(checkpoint: Checkpoint) -> bool:
    """True when the digest still matches the execution id and pins."""
    return checkpoint.digest == checkpoint_digest(checkpoint.execution_id, checkpoint.pins)


def seed_checkpoint(execution_id: str, snapshot: Snapshot) -> Checkpoint:
    """The checkpoint a new root starts with: the thread's objective, so it carries on.

    The seeded pin keeps its original source and time; projecting it back unchanged keeps
    the snapshot's objective line as it was (no duplicate, no re-attribution).
    """
    objective = snapshot.objective
    if objective is None:
        return make_checkpoint(execution_id)
    seeded = Pin(
        kind="objective",
        text=objective.text,
        at=objective.at,
        execution_id=objective.source_execution_id,
    )
    return make_checkpoint(execution_id, (seeded,))


def genesis(thread_id: str) -> Snapshot:
    """Revision 0: the empty snapshot every thread's chain starts from."""
    return Snapshot(
        thread_id=thread_id,
        revision=0,
        objective=None,
        decisions=(),
        constraints=(),
        open_items=(),
        next_actions=(),
        resolved=(),
        outcomes=(),
        previous_digest=None,
        compactions=(),
        degraded=False,
    )


def snapshot_bytes(snapshot: Snapshot) -> bytes:
    """The canonical bytes of a snapshot: what is stored, digested and capped."""
    return canonical_json(snapshot)


def snapshot_digest(snapshot: Snapshot) -> str:
    """`sha256:<hex>` of `snapshot_bytes`."""
    return sha256_digest(snapshot_bytes(snapshot))


def decode_snapshot(data: bytes) -> Snapshot:
    """Stored bytes back into a Snapshot (raises msgspec.ValidationError on a bad shape)."""
    return msgspec.json.decode(data, type=Snapshot)


def verify_snapshot(data: bytes, stored_digest: str, previous_digest: str | None) -> Snapshot:
    """Decode stored bytes, checking them against their digest and their chain link.

    THREAD_CONTEXT_TAMPERED when the bytes do not hash to `stored_digest`, are not the
    canonical form of what they decode to, or do not point at `previous_digest`.
    """
    if sha256_digest(data) != stored_digest:
        raise ThreadContextTampered(revision=_revision_hint(data), reason="digest mismatch")
    try:
        snapshot = decode_snapshot(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ThreadContextTampered(revision=None, reason="undecodable snapshot") from exc
    if snapshot_bytes(snapshot) != data:
        raise ThreadContextTampered(revision=snapshot.revision, reason="not canonical")
    if snapshot.previous_digest != previous_digest:
        raise ThreadContextTampered(revision=snapshot.revision, reason="chain link broken")
    return snapshot


class ChainLink(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The fields of a stored snapshot that place it in its chain."""

    thread_id: str
    revision: int
    previous_digest: str | None


_link_decoder = msgspec.json.Decoder(ChainLink)


def verify_link(data: bytes, stored_digest: str, previous_digest: str | None) -> ChainLink:
    """A link of the chain checked without re-canonicalising it: the bytes hash to their
    digest and point at `previous_digest`. Enough for the revisions below the one served:
    their digests are what the next revision (and the roots' bindings) vouch for, and a
    client re-hashes bytes, not a re-encoding. ~40x cheaper than `verify_snapshot` on a
    full snapshot, so verifying a whole chain stays cheap as the thread grows."""
    if sha256_digest(data) != stored_digest:
        raise ThreadContextTampered(revision=_revision_hint(data), reason="digest mismatch")
    try:
        link = _link_decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ThreadContextTampered(revision=None, reason="undecodable snapshot") from exc
    if link.previous_digest != previous_digest:
        raise ThreadContextTampered(revision=link.revision, reason="chain link broken")
    return link


def verify_chain(snapshots: Sequence[tuple[Snapshot, str]]) -> None:
    """Check consecutive `(snapshot, stored digest)` pairs, oldest first.

    Each must hash to its stored digest, follow its predecessor by one revision and point
    at the predecessor's digest; a chain that starts at revision 0 must start at genesis.
    """
    previous: tuple[Snapshot, str] | None = None
    for snapshot, stored in snapshots:
        if snapshot_digest(snapshot) != stored:
            raise ThreadContextTampered(revision=snapshot.revision, reason="digest mismatch")
        if previous is None:
            if snapshot.revision == 0 and snapshot != genesis(snapshot.thread_id):
                raise ThreadContextTampered(revision=0, reason="revision 0 is not genesis")
        elif (
            snapshot.revision != previous[0].revision + 1
            or snapshot.thread_id != previous[0].thread_id
            or snapshot.previous_digest != previous[1]
        ):
            raise ThreadContextTampered(revision=snapshot.revision, reason="chain link broken")
        previous = (snapshot, stored)


def _revision_hint(data: bytes) -> int | None:
    # Best effort for the error's details only; the bytes are already known to be bad.
    try:
        revision = msgspec.json.decode(data, type=dict[str, object]).get("revision")
    except msgspec.DecodeError:
        return None
    return revision if isinstance(revision, int) else None


def _check_pin(pin: Pin) -> None:
    if pin.kind not in PIN_KINDS:
        raise InvalidArgument(f"unknown pin kind {pin.kind!r}", kind=pin.kind)
    if not pin.text.strip():
        raise InvalidArgument("a pin needs text", kind=pin.kind)
    try:
        pin.text.encode("utf-8")
    except UnicodeEncodeError as exc:
        # A lone surrogate has no UTF-8 form, so the pin could never be canonicalised.
        raise InvalidArgument("pin text is not valid Unicode", kind=pin.kind) from exc
