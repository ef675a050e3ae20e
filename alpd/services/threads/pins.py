"""`context/pin`: a line added to the calling execution's checkpoint (digest recomputed)."""

from __future__ import annotations

import msgspec

from alpd.domain.secrets.filter import redact
from alpd.domain.threads.context import (
    Checkpoint,
    Pin,
    add_pin,
    checkpoint_is_intact,
    line_id,
    make_checkpoint,
)
from alpd.errors import ExecutionRootSettled, InvalidArgument, PinOutsideExecution
from alpd.services.context import Caller, Daemon
from alpd.services.runs.callers import execution_of_caller
from alpd.services.threads.snapshots import load_checkpoint, load_snapshot
from alpd.store.db import Tx
from alpd.store.threads.shell import context_revision_of
from alpd.store.threads.snapshots import execution_status, save_checkpoint
from protocol import messages as m

MAX_PIN_BYTES = 4096


async def pin(daemon: Daemon, caller: Caller, params: m.PinParams) -> m.PinResult:
    text = params.text.strip()
    if not text:
        raise InvalidArgument("a pin needs text: `alp context pin decision -- TEXT`")
    if len(text.encode()) > MAX_PIN_BYTES:
        raise InvalidArgument(
            f"a pin is at most {MAX_PIN_BYTES} bytes; keep large artifacts in the workspace "
            "and pin their path",
            limit=MAX_PIN_BYTES,
        )
    # Pins reach checkpoints, snapshots and every later root's session context: filtered once.
    text = redact(text).text
    row = await execution_of_caller(daemon.store, caller)
    execution_id = row.id
    at = daemon.clock.now_iso()

    async def unit(tx: Tx) -> m.PinResult:
        status = await execution_status(tx, execution_id)
        if status is None or status == "settled":
            # It settled between finding it and this write: its checkpoint has been projected
            # (or handed to its root) already, so a pin now would be accepted and then lost.
            raise PinOutsideExecution(
                f"execution {execution_id} has settled; a finished run can no longer pin",
                pid=caller.pid,
                executionId=execution_id,
            )
        if row.root_id != execution_id and await execution_status(tx, row.root_id) == "settled":
            # A child that outlives its root: what it pinned so far went with the root's
            # settle; a pin now would be stored where nothing projects it — refuse it.
            raise ExecutionRootSettled(
                f"execution {execution_id}'s root {row.root_id} has settled, so this pin "
                "could no longer reach the thread; write it into your result or output "
                "instead, or hand off to the thread (`alp handoff`)",
                executionId=execution_id,
                rootId=row.root_id,
            )
        current = await load_checkpoint(tx, execution_id) or make_checkpoint(execution_id)
        updated = add_pin(
            current, Pin(kind=params.kind, text=text, at=at, execution_id=execution_id)
        )
        if not checkpoint_is_intact(current):
            # A pin must not launder a tampered checkpoint into a valid one.
            updated = msgspec.structs.replace(updated, digest=current.digest)
        await save_checkpoint(tx, updated, at)
        result = m.PinResult(
            execution_id=execution_id,
            thread_id=row.thread_id,
            kind=params.kind,
            text=text,
            at=at,
            checkpoint_digest=updated.digest,
            pins=len(updated.pins),
        )
        if params.kind != "resolve":
            return result
        items = await _open_items(tx, row.thread_id, current)
        if resolves(items, text):
            return msgspec.structs.replace(result, matched=True)
        return msgspec.structs.replace(result, matched=False, open_items=items)

    return await daemon.store.write(unit)


def resolves(items: list[m.OpenItem], text: str) -> bool:
    """Whether a `resolve` pin of `text` closes one of `items` (the projector's rule: the
    item's id, or its exact text)."""
    return any(item.id == text or item.text == text for item in items)


async def _open_items(tx: Tx, thread_id: str | None, checkpoint: Checkpoint) -> list[m.OpenItem]:
    """The open items a resolve could name now: the thread's, and this run's own."""
    items: list[m.OpenItem] = []
    if thread_id is not None:
        context_revision = await context_revision_of(tx, thread_id)
        if context_revision is not None:
            snapshot, _digest = await load_snapshot(tx, thread_id, context_revision)
            items += [m.OpenItem(id=line.id, text=line.text) for line in snapshot.open_items]
    items += [
        m.OpenItem(id=line_id(pin.kind, pin.text, pin.execution_id), text=pin.text)
        for pin in checkpoint.pins
        if pin.kind == "open-item"
    ]
    return items


async def hand_pins_to_root(tx: Tx, child_id: str, root_id: str, at: str) -> None:
    """A settled child's pins join its root's checkpoint, still attributed to the child, so
    they reach the thread when the root settles (children are never projected themselves)."""
    child = await load_checkpoint(tx, child_id)
    if child is None or not checkpoint_is_intact(child) or not child.pins:
        return
    root = await load_checkpoint(tx, root_id) or make_checkpoint(root_id)
    merged = root
    for pin in child.pins:
        merged = add_pin(merged, pin)
    if not checkpoint_is_intact(root):
        merged = msgspec.structs.replace(merged, digest=root.digest)
    await save_checkpoint(tx, merged, at)
