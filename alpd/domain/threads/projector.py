"""The context projector: snapshot rev n + checkpoint + outcome → snapshot rev n+1.

Pure and deterministic (invariant 6): the same three inputs always give the same bytes.
The projector sees only pins and the outcome — never transcripts or history (invariant 7).

Merge rules, applied to the checkpoint's pins in the order they were pinned:

- objective: replaces. A pin with the current objective's exact text changes nothing, so
  the objective seeded into a new root's checkpoint (`seed_checkpoint`) never duplicates
  and keeps its original attribution.
- decision, constraint: accumulate; a pin whose exact text is already there is skipped
  (the first execution that pinned it keeps the credit).
- open-item: accumulates among the open items, deduplicated by exact text.
- resolve: closes the first open item whose id or exact text equals the pin's text
  (surrounding whitespace ignored for ids) and moves it to `resolved` (matched). A resolve
  naming nothing open is recorded in `resolved` with `matched: false`, attributed to the
  resolver: the item may have been dropped by compaction, and the intent must not vanish.
- next-action: if the execution pinned any, they REPLACE the list (the newest run knows
  what is next; stale next steps would otherwise pile up forever); otherwise the list
  carries over unchanged.
- outcome: one line per execution, appended; projecting an execution twice is refused.

Missing checkpoint, a checkpoint whose digest does not match, or one holding a malformed
pin (unknown kind, empty text, an oversized id or time) → `degraded: true`, and only the
outcome is carried: the run's pins never arrive, everything else is kept as it was.

Bounds. Every text (pins, outcome summaries) is capped at `LINE_TEXT_CAP_BYTES` of
canonical JSON, cut at a character boundary and ended with a marker naming the original
size. The whole snapshot is capped at `CONTEXT_CAP_BYTES` (measured on `snapshot_bytes`).
Over the cap, lines are dropped in this order until it fits (always a prefix of it):

1. resolved lines, oldest first;
2. outcomes, oldest first — never the newest;
3. decisions, oldest first;
4. open items, oldest first;
5. constraints, oldest first (rules the work obeys outlive the decisions made under them);
6. next actions, oldest first.

The objective and the newest outcome are never dropped; with every line capped and the
compaction history bounded, they always fit. Each projection that drops or truncates
writes a `CompactionRecord` (provenance: kind, id, source execution of every line). The
snapshot keeps the last `COMPACTIONS_KEPT` records, each listing at most a few lines plus
exact counts (`listed`), so it fits its cap; `Projection.compaction` is the full record —
every dropped and truncated line — which the daemon stores beside the snapshot, every one
of them, and serves with `thread/context`. Dropped text is not lost: it is still in the
earlier, immutable revisions.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Final

import msgspec

from alpd.domain.canonical import canonical_json
from alpd.domain.threads.context import (
    PIN_KINDS,
    Checkpoint,
    CompactionRecord,
    ContextLine,
    DroppedLine,
    Outcome,
    OutcomeLine,
    Pin,
    ResolvedLine,
    Snapshot,
    checkpoint_is_intact,
    line_id,
    snapshot_bytes,
    snapshot_digest,
)
from alpd.errors import InvalidArgument

CONTEXT_CAP_BYTES: Final = 32 * 1024
LINE_TEXT_CAP_BYTES: Final = 4 * 1024
MAX_LABEL_CHARS: Final = 128
COMPACTIONS_KEPT: Final = 3
DROPPED_LISTED: Final = 8
TRUNCATED_LISTED: Final = 4


class Projection(msgspec.Struct, frozen=True, kw_only=True):
    """The next snapshot, the compaction it needed (full record) and whether it degraded."""

    snapshot: Snapshot
    compaction: CompactionRecord | None
    degraded: bool


def project_context(
    snapshot: Snapshot, checkpoint: Checkpoint | None, outcome: Outcome
) -> Projection:
    """Project a settled root's checkpoint and outcome onto `snapshot` (see module doc)."""
    _check_outcome(snapshot, checkpoint, outcome)
    merge = _Merge.of(snapshot)
    usable = checkpoint is not None and _checkpoint_is_usable(checkpoint)
    if checkpoint is not None and usable:
        for pin in checkpoint.pins:
            merge.apply(pin)
    merge.add_outcome(outcome)
    candidate = merge.snapshot(
        snapshot.revision + 1, snapshot_digest(snapshot), snapshot.compactions, not usable
    )
    projected, record = _compact(candidate, merge.truncated)
    return Projection(snapshot=projected, compaction=record, degraded=not usable)


def cap_text(text: str) -> tuple[str, bool]:
    """`text` cut to LINE_TEXT_CAP_BYTES of JSON, with a marker; and whether it was cut.

    Lone surrogates (possible in Python strings, not in UTF-8) become `?` first, so every
    text can be canonicalised.
    """
    text = text.encode("utf-8", "replace").decode("utf-8")
    if _json_len(text) <= LINE_TEXT_CAP_BYTES:
        return text, False
    marker = f" […truncated by alp from {len(text.encode('utf-8'))} bytes]"
    budget = LINE_TEXT_CAP_BYTES - _json_len(marker)
    kept = 0
    for index, char in enumerate(text):
        budget -= _char_cost(char)
        if budget < 0:
            kept = index
            break
    return text[:kept] + marker, True


def _json_len(text: str) -> int:
    return sum(_char_cost(char) for char in text)


def _char_cost(char: str) -> int:
    # Bytes `char` takes inside an RFC 8785 string: short escapes, \u00XX for other
    # controls, UTF-8 for everything else (JCS leaves non-ASCII unescaped).
    if char in '"\\\b\f\n\r\t':
        return 2
    if ord(char) < 0x20:
        return 6
    return len(char.encode("utf-8"))


def _check_outcome(snapshot: Snapshot, checkpoint: Checkpoint | None, outcome: Outcome) -> None:
    if not _label_ok(outcome.execution_id) or not _label_ok(outcome.at):
        raise InvalidArgument("outcome execution id or time is empty or too long")
    if checkpoint is not None and checkpoint.execution_id != outcome.execution_id:
        raise InvalidArgument(
            "checkpoint and outcome belong to different executions",
            checkpoint=checkpoint.execution_id,
            outcome=outcome.execution_id,
        )
    if any(line.source_execution_id == outcome.execution_id for line in snapshot.outcomes):
        raise InvalidArgument("execution already projected", execution=outcome.execution_id)


def _checkpoint_is_usable(checkpoint: Checkpoint) -> bool:
    return checkpoint_is_intact(checkpoint) and all(
        pin.kind in PIN_KINDS
        and pin.text.strip()
        and _label_ok(pin.execution_id)
        and _label_ok(pin.at)
        for pin in checkpoint.pins
    )


def _label_ok(value: str) -> bool:
    return 0 < len(value) <= MAX_LABEL_CHARS


@dataclass
class _Merge:
    """Mutable working copy of one projection; turned back into a frozen Snapshot."""

    thread_id: str
    objective: ContextLine | None
    decisions: list[ContextLine]
    constraints: list[ContextLine]
    open_items: list[ContextLine]
    next_actions: list[ContextLine]
    resolved: list[ResolvedLine]
    outcomes: list[OutcomeLine]
    new_next_actions: list[ContextLine] | None = None
    truncated: list[DroppedLine] = field(default_factory=list)

    @classmethod
    def of(cls, snapshot: Snapshot) -> _Merge:
        return cls(
            thread_id=snapshot.thread_id,
            objective=snapshot.objective,
            decisions=list(snapshot.decisions),
            constraints=list(snapshot.constraints),
            open_items=list(snapshot.open_items),
            next_actions=list(snapshot.next_actions),
            resolved=list(snapshot.resolved),
            outcomes=list(snapshot.outcomes),
        )

    def apply(self, pin: Pin) -> None:
        line = self._line(pin.kind, pin.text, pin.execution_id, pin.at)
        if pin.kind == "objective":
            if self.objective is None or self.objective.text != line.text:
                self.objective = line
        elif pin.kind == "decision":
            _append_new(self.decisions, line)
        elif pin.kind == "constraint":
            _append_new(self.constraints, line)
        elif pin.kind == "open-item":
            _append_new(self.open_items, line)
        elif pin.kind == "next-action":
            if self.new_next_actions is None:
                self.new_next_actions = []
            _append_new(self.new_next_actions, line)
        else:
            self._resolve(line)

    def _resolve(self, pin_line: ContextLine) -> None:
        wanted = pin_line.text.strip()
        for index, item in enumerate(self.open_items):
            if item.id == wanted or item.text == pin_line.text:
                del self.open_items[index]
                self.resolved.append(_resolved(item, pin_line, matched=True))
                return
        self.resolved.append(_resolved(pin_line, pin_line, matched=False))

    def add_outcome(self, outcome: Outcome) -> None:
        summary = outcome.summary
        if summary is not None:
            summary = self._capped("outcome", summary, outcome.execution_id)
        self.outcomes.append(
            OutcomeLine(
                id=line_id("outcome", "", outcome.execution_id),
                source_execution_id=outcome.execution_id,
                status=outcome.status,
                summary=summary,
                exit_code=outcome.exit_code,
                at=outcome.at,
            )
        )

    def snapshot(
        self,
        revision: int,
        previous_digest: str,
        compactions: tuple[CompactionRecord, ...],
        degraded: bool,
    ) -> Snapshot:
        next_actions = self.next_actions if self.new_next_actions is None else self.new_next_actions
        return Snapshot(
            thread_id=self.thread_id,
            revision=revision,
            objective=self.objective,
            decisions=tuple(self.decisions),
            constraints=tuple(self.constraints),
            open_items=tuple(self.open_items),
            next_actions=tuple(next_actions),
            resolved=tuple(self.resolved),
            outcomes=tuple(self.outcomes),
            previous_digest=previous_digest,
            compactions=compactions,
            degraded=degraded,
        )

    def _line(self, kind: str, text: str, source: str, at: str) -> ContextLine:
        text = self._capped(kind, text, source)
        return ContextLine(
            id=line_id(kind, text, source), text=text, source_execution_id=source, at=at
        )

    def _capped(self, kind: str, text: str, source: str) -> str:
        capped, was_cut = cap_text(text)
        if was_cut:
            self.truncated.append(
                DroppedLine(kind=kind, id=line_id(kind, capped, source), source_execution_id=source)
            )
        return capped


def _append_new(lines: list[ContextLine], line: ContextLine) -> None:
    if all(existing.text != line.text for existing in lines):
        lines.append(line)


def _resolved(item: ContextLine, pin_line: ContextLine, *, matched: bool) -> ResolvedLine:
    return ResolvedLine(
        id=item.id,
        text=item.text,
        source_execution_id=item.source_execution_id,
        at=item.at,
        resolved_by_execution_id=pin_line.source_execution_id,
        resolved_at=pin_line.at,
        matched=matched,
    )


@dataclass(frozen=True)
class _Droppable:
    section: str
    index: int
    line: DroppedLine
    cost: int


# (snapshot field, DroppedLine kind) in the order lines are dropped.
DROP_ORDER: Final = (
    ("resolved", "resolved"),
    ("outcomes", "outcome"),
    ("decisions", "decision"),
    ("open_items", "open-item"),
    ("constraints", "constraint"),
    ("next_actions", "next-action"),
)


def drop_order(snapshot: Snapshot) -> Iterator[_Droppable]:
    """Every droppable line of `snapshot`, in the order compaction removes them."""
    for section, kind in DROP_ORDER:
        lines: tuple[ContextLine | ResolvedLine | OutcomeLine, ...] = getattr(snapshot, section)
        if section == "outcomes":
            lines = lines[:-1]
        for index, line in enumerate(lines):
            dropped = DroppedLine(
                kind=kind, id=line.id, source_execution_id=line.source_execution_id
            )
            # +1 for the comma that separates it from its neighbours.
            yield _Droppable(section, index, dropped, len(canonical_json(line)) + 1)


def _compact(
    candidate: Snapshot, truncated: list[DroppedLine]
) -> tuple[Snapshot, CompactionRecord | None]:
    before = len(snapshot_bytes(candidate))
    if before <= CONTEXT_CAP_BYTES and not truncated:
        return candidate, None
    order = list(drop_order(candidate))
    count = 0
    while True:
        record = _record(candidate, before, [d.line for d in order[:count]], truncated)
        projected, record = _with_record(candidate, order[:count], record)
        excess = len(snapshot_bytes(projected)) - CONTEXT_CAP_BYTES
        if excess <= 0:
            return projected, record
        if count == len(order):
            # Unreachable while every text is capped and ids are bounded (module doc).
            raise AssertionError(f"snapshot cannot fit the cap: {excess} bytes over")
        while excess > 0 and count < len(order):
            excess -= order[count].cost
            count += 1


def _record(
    candidate: Snapshot, before: int, dropped: list[DroppedLine], truncated: list[DroppedLine]
) -> CompactionRecord:
    reasons = []
    if dropped:
        reasons.append(f"snapshot over {CONTEXT_CAP_BYTES} bytes")
    if truncated:
        reasons.append(f"{len(truncated)} line(s) over {LINE_TEXT_CAP_BYTES} bytes")
    return CompactionRecord(
        revision=candidate.revision,
        reason="; ".join(reasons),
        bytes_before=before,
        bytes_after=0,
        dropped_count=len(dropped),
        dropped=tuple(dropped),
        truncated_count=len(truncated),
        truncated=tuple(truncated),
    )


def listed(record: CompactionRecord) -> CompactionRecord:
    """The bounded copy of a full compaction record that its snapshot keeps: the first
    `DROPPED_LISTED` dropped and `TRUNCATED_LISTED` truncated lines, the counts exact."""
    return msgspec.structs.replace(
        record,
        dropped=record.dropped[:DROPPED_LISTED],
        truncated=record.truncated[:TRUNCATED_LISTED],
    )


def _with_record(
    candidate: Snapshot, dropped: list[_Droppable], full: CompactionRecord
) -> tuple[Snapshot, CompactionRecord]:
    """The candidate without `dropped`, holding a bounded copy of the record.

    `bytes_after` is part of the bytes it measures, so it is found as a fixed point (the
    size changes only with its digit count, so this settles within a few rounds).
    """
    gone = {(d.section, d.index) for d in dropped}
    kept = {
        section: tuple(
            line for i, line in enumerate(getattr(candidate, section)) if (section, i) not in gone
        )
        for section, _ in DROP_ORDER
    }
    bytes_after = 0
    for _ in range(8):
        bounded = listed(msgspec.structs.replace(full, bytes_after=bytes_after))
        compactions = (*candidate.compactions, bounded)[-COMPACTIONS_KEPT:]
        projected = msgspec.structs.replace(candidate, compactions=compactions, **kept)
        size = len(snapshot_bytes(projected))
        if size == bytes_after:
            break
        bytes_after = size
    return projected, msgspec.structs.replace(full, bytes_after=bytes_after)
