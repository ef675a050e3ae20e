"""Clear and undo (alpd.domain.threads.steering): interleaved with roots that pin and settle, every
chain invariant keeps holding, undo walks back one root at a time and stops at a clear, and
the steps verify against the chain — while any forged step does not."""

from __future__ import annotations

import dataclasses

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
)

from alpd.domain.threads.context import (
    Checkpoint,
    Outcome,
    Pin,
    Snapshot,
    add_pin,
    genesis,
    seed_checkpoint,
    snapshot_digest,
    verify_chain,
)
from alpd.domain.threads.projector import project_context
from alpd.domain.threads.steering import (
    RootMark,
    Step,
    cleared_snapshot,
    content_of,
    labels_of,
    readable,
    restored_snapshot,
    root_to_undo,
    verify_steps,
)
from alpd.errors import ThreadContextTampered, ThreadNothingToUndo

THREAD = "thread_01hzzzzzzzzzzzzzzzzzzzzzzz"
STATUSES = ("completed", "failed", "cancelled", "interrupted")
PIN_KINDS = ("objective", "decision", "constraint", "open-item", "next-action")


class SteeredThread:
    """A thread in memory, driven through the domain only: the chain, its roots, its steps."""

    def __init__(self) -> None:
        first = genesis(THREAD)
        self.chain: list[tuple[Snapshot, str]] = [(first, snapshot_digest(first))]
        self.roots: list[RootMark] = []
        self.steps: list[Step] = []
        self.running: Checkpoint | None = None

    @property
    def head(self) -> tuple[Snapshot, str]:
        return self.chain[-1]

    def open_root(self) -> str:
        execution_id = f"exec_{len(self.roots) + 1:03d}"
        snapshot, _ = self.head
        self.roots.append(RootMark(execution_id, len(self.roots) + 1, snapshot.revision, False))
        self.running = seed_checkpoint(execution_id, snapshot)
        return execution_id

    def settle(self, status: str, *, broken: bool = False) -> None:
        assert self.running is not None
        checkpoint = self.running
        if broken:
            checkpoint = msgspec.structs.replace(checkpoint, digest="sha256:" + "0" * 64)
        outcome = msgspec.convert(
            {
                "executionId": checkpoint.execution_id,
                "status": status,
                "summary": status,
                "exitCode": 0,
                "at": "t",
            },
            Outcome,
        )
        projected = project_context(self.head[0], checkpoint, outcome).snapshot
        self.chain.append((projected, snapshot_digest(projected)))
        self.roots[-1] = dataclasses.replace(self.roots[-1], settled=True)
        self.running = None

    def clear(self) -> Step:
        written = cleared_snapshot(*self.head)
        return self._append(written, Step(kind="clear", revision=written.revision))

    def undo(self) -> Step:
        root = root_to_undo(self.roots, self.steps, THREAD)
        opened_on = self.chain[root.opened_on][0]
        written = restored_snapshot(*self.head, opened_on)
        step = Step("undo", written.revision, root.execution_id, root.opened_on)
        return self._append(written, step)

    def _append(self, written: Snapshot, step: Step) -> Step:
        self.chain.append((written, snapshot_digest(written)))
        self.steps.append(step)
        return step

    def verify(self) -> None:
        verify_chain(self.chain)
        snapshots = {s.revision: s for s, _ in self.chain}
        verify_steps(THREAD, self.head[0].revision, self.steps, self.roots, snapshots)


def move(thread: SteeredThread, kind: str) -> None:
    """`r` a root that pins a decision (its own id) and completes, `c` clear, `u` undo."""
    if kind == "r":
        execution_id = thread.open_root()
        assert thread.running is not None
        decision = Pin(kind="decision", text=execution_id, at="t", execution_id=execution_id)
        thread.running = add_pin(thread.running, decision)
        thread.settle("completed")
    elif kind == "c":
        thread.clear()
    else:
        thread.undo()


def thread_with(*moves: str) -> SteeredThread:
    thread = SteeredThread()
    for kind in moves:
        move(thread, kind)
    return thread


def decisions(thread: SteeredThread) -> list[str]:
    return [line.text for line in thread.head[0].decisions]


# the rules, one by one


def test_a_clear_is_an_empty_revision_chained_to_the_head() -> None:
    thread = thread_with("r", "r")
    head, digest = thread.head
    cleared = cleared_snapshot(head, digest)
    assert (cleared.revision, cleared.previous_digest) == (head.revision + 1, digest)
    assert content_of(cleared) == content_of(genesis(THREAD))
    assert cleared.thread_id == THREAD
    verify_chain([*thread.chain, (cleared, snapshot_digest(cleared))])


def test_an_undo_holds_exactly_what_the_root_opened_on() -> None:
    thread = thread_with("r", "r", "r")
    step = thread.undo()
    assert step.execution_id == "exec_003" and step.restored_revision == 2
    assert content_of(thread.head[0]) == content_of(thread.chain[2][0])
    assert decisions(thread) == ["exec_001", "exec_002"]
    thread.verify()


def test_undo_of_undo_walks_back_and_stops_at_a_clear() -> None:
    thread = thread_with("r", "c", "r", "r", "r")
    undone = [thread.undo().execution_id for _ in range(3)]
    assert undone == ["exec_004", "exec_003", "exec_002"]
    assert decisions(thread) == []
    with pytest.raises(ThreadNothingToUndo) as info:
        thread.undo()
    assert info.value.data["clearedAt"] == 2
    assert "since the clear at revision 2" in info.value.message
    thread.verify()


def test_a_thread_with_nothing_settled_has_nothing_to_undo() -> None:
    with pytest.raises(ThreadNothingToUndo) as info:
        thread_with().undo()
    assert "in this thread" in info.value.message
    thread = SteeredThread()
    thread.open_root()
    with pytest.raises(ThreadNothingToUndo):
        root_to_undo(thread.roots, thread.steps, THREAD)


def test_labels_say_before_clear_and_undone_and_only_unlabelled_roots_are_readable() -> None:
    thread = thread_with("r", "c", "r", "r", "u")
    labels = {root.execution_id: labels_of(root, thread.steps) for root in thread.roots}
    assert labels == {"exec_001": ("before-clear",), "exec_002": (), "exec_003": ("undone",)}
    thread = thread_with("r", "u", "c")
    assert labels_of(thread.roots[0], thread.steps) == ("before-clear", "undone")
    assert [readable(root, thread.steps) for root in thread.roots] == [False]


# forged steps


def _forgeries(thread: SteeredThread) -> list[list[Step]]:
    forged: list[list[Step]] = []
    for index, step in enumerate(thread.steps):
        others = thread.steps[:index] + thread.steps[index + 1 :]
        forged.append(others)  # a step row removed
        if step.kind == "undo":
            restored = thread.chain[step.restored_revision or 0][0]
            if content_of(restored) != content_of(genesis(THREAD)):
                # an undo passed off as a clear (an undo back to an empty context writes the
                # same bytes as a clear: only its row says which it was)
                forged.append([*others, Step("clear", step.revision)])
            wrong = Step(
                "undo", step.revision, step.execution_id, (step.restored_revision or 0) + 1
            )
            forged.append([*others, wrong])  # restoring another revision
        else:
            forged.append([*others, Step("undo", step.revision, "exec_001", 0)])
    for root in thread.roots:
        # a step claimed where a root projected
        forged.append([*thread.steps, Step("clear", root.opened_on + 1)])
    return forged


def test_every_forged_step_is_tampered() -> None:
    thread = thread_with("r", "r", "c", "r", "r", "u", "r", "u", "u")
    thread.verify()
    snapshots = {s.revision: s for s, _ in thread.chain}
    head = thread.head[0].revision
    forgeries = _forgeries(thread)
    assert len(forgeries) > 10
    for steps in forgeries:
        with pytest.raises(ThreadContextTampered):
            verify_steps(
                THREAD, head, sorted(steps, key=lambda s: s.revision), thread.roots, snapshots
            )


def test_a_step_revision_rewritten_with_other_content_is_tampered() -> None:
    thread = thread_with("r", "r", "u", "c")
    snapshots = {s.revision: s for s, _ in thread.chain}
    for step in thread.steps:
        other = thread_with("r", "r")
        forged = {**snapshots, step.revision: other.head[0]}
        with pytest.raises(ThreadContextTampered):
            verify_steps(THREAD, thread.head[0].revision, thread.steps, thread.roots, forged)


# interleavings


class Steering(RuleBasedStateMachine):
    """Clear and undo interleaved with roots that pin, settle (any status, degraded or not);
    checked against a reference model: a stack of (root, content it opened on) since the last
    clear."""

    def __init__(self) -> None:
        super().__init__()
        self.thread = SteeredThread()
        self.stack: list[tuple[str, Snapshot]] = []
        self.cleared: set[str] = set()
        self.undone: set[str] = set()

    @precondition(lambda self: self.thread.running is None)
    @rule()
    def open_root(self) -> None:
        self.thread.open_root()

    @precondition(lambda self: self.thread.running is not None)
    @rule(kind=st.sampled_from(PIN_KINDS), text=st.sampled_from(["a", "b", "c", "ship", "ü"]))
    def pin(self, kind: str, text: str) -> None:
        checkpoint = self.thread.running
        assert checkpoint is not None
        self.thread.running = add_pin(
            checkpoint, msgspec.convert({"kind": kind, "text": text, "at": "t",
                                         "executionId": checkpoint.execution_id}, Pin)
        )  # fmt: skip

    @precondition(lambda self: self.thread.running is not None)
    @rule(status=st.sampled_from(STATUSES), broken=st.booleans())
    def settle(self, status: str, broken: bool) -> None:
        root = self.thread.roots[-1]
        self.stack.append((root.execution_id, content_of(self.thread.head[0])))
        self.thread.settle(status, broken=broken)

    @precondition(lambda self: self.thread.running is None)
    @rule()
    def clear(self) -> None:
        self.thread.clear()
        self.cleared |= {root.execution_id for root in self.thread.roots}
        self.stack.clear()

    @precondition(lambda self: self.thread.running is None)
    @rule()
    def undo(self) -> None:
        if not self.stack:
            with pytest.raises(ThreadNothingToUndo):
                self.thread.undo()
            return
        expected_root, expected_content = self.stack.pop()
        step = self.thread.undo()
        assert step.execution_id == expected_root
        assert content_of(self.thread.head[0]) == expected_content
        self.undone.add(expected_root)

    @invariant()
    def chain_and_steps_verify(self) -> None:
        self.thread.verify()

    @invariant()
    def every_write_is_the_next_revision(self) -> None:
        assert [s.revision for s, _ in self.thread.chain] == list(range(len(self.thread.chain)))

    @invariant()
    def labels_follow_the_model(self) -> None:
        for root in self.thread.roots:
            labels = labels_of(root, self.thread.steps)
            assert ("before-clear" in labels) == (root.execution_id in self.cleared)
            assert ("undone" in labels) == (root.execution_id in self.undone)

    @invariant()
    def the_head_is_what_the_model_says(self) -> None:
        if self.thread.running is None and self.stack:
            # the head holds the last live root's result: undoing it gives what it opened on
            root_id, _ = self.stack[-1]
            assert (
                root_to_undo(self.thread.roots, self.thread.steps, THREAD).execution_id == root_id
            )


TestSteering = Steering.TestCase
TestSteering.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from("rrcu"), max_size=30))
def test_any_history_of_moves_verifies(moves: list[str]) -> None:
    thread = SteeredThread()
    for kind in moves:
        try:
            move(thread, kind)
        except ThreadNothingToUndo:
            assert kind == "u"
    thread.verify()
