"""The context projector: merge rules, the 32 KiB cap, degradation and the digest chain."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

import msgspec
import pytest
import rfc8785
from hypothesis import event, given, settings
from hypothesis import strategies as st

from alpd.domain.threads import projector
from alpd.domain.threads.context import (
    Checkpoint,
    ContextLine,
    Outcome,
    OutcomeLine,
    Pin,
    PinKind,
    ResolvedLine,
    Snapshot,
    add_pin,
    checkpoint_is_intact,
    decode_snapshot,
    genesis,
    make_checkpoint,
    seed_checkpoint,
    snapshot_bytes,
    snapshot_digest,
    verify_chain,
    verify_link,
    verify_snapshot,
)
from alpd.domain.threads.projector import (
    CONTEXT_CAP_BYTES,
    DROP_ORDER,
    LINE_TEXT_CAP_BYTES,
    cap_text,
    drop_order,
    project_context,
)
from alpd.errors import InvalidArgument, ThreadContextTampered

THREAD = "thread_01hzzzzzzzzzzzzzzzzzzzzzzz"


def pin(kind: PinKind, text: str, execution_id: str = "exec_a", at: str = "t1") -> Pin:
    return Pin(kind=kind, text=text, at=at, execution_id=execution_id)


def outcome(execution_id: str = "exec_a", status: str = "completed") -> Outcome:
    return msgspec.convert(
        {
            "executionId": execution_id,
            "status": status,
            "summary": "done",
            "exitCode": 0,
            "at": "t9",
        },
        Outcome,
    )


def run(snapshot: Snapshot, execution_id: str, *pins: Pin) -> Snapshot:
    checkpoint = make_checkpoint(execution_id, pins)
    return project_context(snapshot, checkpoint, outcome(execution_id)).snapshot


def all_lines(snapshot: Snapshot) -> list[ContextLine | ResolvedLine | OutcomeLine]:
    objective = [snapshot.objective] if snapshot.objective else []
    return [
        *objective,
        *snapshot.decisions,
        *snapshot.constraints,
        *snapshot.open_items,
        *snapshot.next_actions,
        *snapshot.resolved,
        *snapshot.outcomes,
    ]


@contextmanager
def small_caps(context: int, line: int) -> Iterator[None]:
    """Shrink the caps so compaction happens with small inputs (the rules are the same)."""
    with mock.patch.multiple(projector, CONTEXT_CAP_BYTES=context, LINE_TEXT_CAP_BYTES=line):
        yield


# -- merge rules ------------------------------------------------------------------------


def test_genesis_is_revision_zero_and_empty() -> None:
    snapshot = genesis(THREAD)
    assert snapshot.revision == 0 and snapshot.previous_digest is None
    assert all_lines(snapshot) == [] and not snapshot.degraded


def test_objective_replaces_and_keeps_attribution() -> None:
    first = run(genesis(THREAD), "exec_a", pin("objective", "ship v1"))
    second = run(first, "exec_b", pin("objective", "ship v2", "exec_b"))
    assert second.objective is not None
    assert (second.objective.text, second.objective.source_execution_id) == ("ship v2", "exec_b")


def test_seeded_objective_does_not_duplicate_or_reattribute() -> None:
    first = run(genesis(THREAD), "exec_a", pin("objective", "ship v1"))
    seeded = seed_checkpoint("exec_b", first)
    second = project_context(first, seeded, outcome("exec_b")).snapshot
    assert second.objective == first.objective


def test_decisions_and_constraints_accumulate_without_duplicates() -> None:
    first = run(
        genesis(THREAD), "exec_a", pin("decision", "use sqlite"), pin("constraint", "no net")
    )
    second = run(
        first,
        "exec_b",
        pin("decision", "use sqlite", "exec_b"),
        pin("decision", "use WAL", "exec_b"),
        pin("constraint", "no net", "exec_b"),
    )
    assert [d.text for d in second.decisions] == ["use sqlite", "use WAL"]
    assert second.decisions[0].source_execution_id == "exec_a"
    assert [c.text for c in second.constraints] == ["no net"]


def test_next_actions_replace_when_the_run_pinned_any() -> None:
    first = run(genesis(THREAD), "exec_a", pin("next-action", "write tests"))
    carried = run(first, "exec_b", pin("decision", "x", "exec_b"))
    replaced = run(carried, "exec_c", pin("next-action", "release", "exec_c"))
    assert [n.text for n in carried.next_actions] == ["write tests"]
    assert [n.text for n in replaced.next_actions] == ["release"]


def test_resolve_closes_an_open_item_by_id_or_exact_text() -> None:
    first = run(genesis(THREAD), "exec_a", pin("open-item", "fix A"), pin("open-item", "fix B"))
    by_id = first.open_items[0].id
    second = run(
        first, "exec_b", pin("resolve", f" {by_id} ", "exec_b"), pin("resolve", "fix B", "exec_b")
    )
    assert second.open_items == ()
    assert [(r.text, r.matched, r.resolved_by_execution_id) for r in second.resolved] == [
        ("fix A", True, "exec_b"),
        ("fix B", True, "exec_b"),
    ]
    assert second.resolved[0].source_execution_id == "exec_a"


def test_resolve_naming_nothing_is_recorded_unmatched() -> None:
    second = run(genesis(THREAD), "exec_a", pin("resolve", "never opened"))
    assert [(r.text, r.matched, r.source_execution_id) for r in second.resolved] == [
        ("never opened", False, "exec_a")
    ]


def test_outcomes_accumulate_one_line_per_execution() -> None:
    snapshot = run(run(genesis(THREAD), "exec_a"), "exec_b")
    assert [o.source_execution_id for o in snapshot.outcomes] == ["exec_a", "exec_b"]
    with pytest.raises(InvalidArgument):
        project_context(snapshot, None, outcome("exec_b"))


def test_checkpoint_of_another_execution_is_refused() -> None:
    with pytest.raises(InvalidArgument):
        project_context(genesis(THREAD), make_checkpoint("exec_x"), outcome("exec_a"))


def test_line_ids_are_stable_across_projections() -> None:
    first = run(genesis(THREAD), "exec_a", pin("open-item", "fix A"))
    again = run(genesis(THREAD), "exec_a", pin("open-item", "fix A"))
    assert first.open_items[0].id == again.open_items[0].id


def test_add_pin_recomputes_the_digest_and_rejects_empty_text() -> None:
    checkpoint = add_pin(make_checkpoint("exec_a"), pin("decision", "x"))
    assert checkpoint_is_intact(checkpoint) and len(checkpoint.pins) == 1
    with pytest.raises(InvalidArgument):
        add_pin(checkpoint, pin("decision", "   "))


# -- degradation (invariant 6) ----------------------------------------------------------


def test_missing_checkpoint_degrades_and_carries_only_the_outcome_invariant_6() -> None:
    first = run(genesis(THREAD), "exec_a", pin("decision", "keep"))
    projection = project_context(first, None, outcome("exec_b"))
    assert projection.degraded and projection.snapshot.degraded
    assert projection.snapshot.decisions == first.decisions
    assert [o.source_execution_id for o in projection.snapshot.outcomes] == ["exec_a", "exec_b"]


def test_hash_broken_checkpoint_degrades_invariant_6() -> None:
    good = make_checkpoint("exec_a", [pin("decision", "honest")])
    forged = msgspec.structs.replace(good, pins=(pin("decision", "forged"),))
    projection = project_context(genesis(THREAD), forged, outcome("exec_a"))
    assert projection.degraded and projection.snapshot.decisions == ()


def test_degraded_flag_belongs_to_one_revision() -> None:
    degraded = project_context(genesis(THREAD), None, outcome("exec_a")).snapshot
    assert not run(degraded, "exec_b").degraded


# -- bounds -----------------------------------------------------------------------------


def test_a_single_line_longer_than_the_cap_is_truncated_with_a_marker() -> None:
    huge = "x" * (CONTEXT_CAP_BYTES * 2)
    projection = project_context(
        genesis(THREAD), make_checkpoint("exec_a", [pin("objective", huge)]), outcome()
    )
    objective = projection.snapshot.objective
    assert objective is not None and "truncated by alp" in objective.text
    assert len(snapshot_bytes(projection.snapshot)) <= CONTEXT_CAP_BYTES
    assert projection.compaction is not None and projection.compaction.truncated_count == 1


def test_objective_is_never_dropped_by_compaction() -> None:
    snapshot = run(genesis(THREAD), "exec_0", pin("objective", "o" * 5000, "exec_0"))
    for i in range(1, 20):
        big = [pin("decision", f"{i}-{j}-" + "d" * 3000, f"exec_{i}") for j in range(4)]
        snapshot = run(snapshot, f"exec_{i}", *big)
        assert snapshot.objective is not None and snapshot.objective.source_execution_id == "exec_0"
        assert len(snapshot_bytes(snapshot)) <= CONTEXT_CAP_BYTES
    assert 0 < len(snapshot.compactions) <= projector.COMPACTIONS_KEPT


@given(st.text(max_size=300))
def test_char_cost_matches_rfc8785(text: str) -> None:
    assert projector._json_len(text) == len(rfc8785.dumps(text)) - 2


@given(st.text(min_size=1, max_size=9000))
@settings(max_examples=60)
def test_cap_text_stays_within_the_line_cap(text: str) -> None:
    capped, cut = cap_text(text)
    assert len(rfc8785.dumps(capped)) - 2 <= LINE_TEXT_CAP_BYTES
    assert cut == (capped != text)


def test_lone_surrogates_are_refused_in_pins_and_replaced_in_summaries() -> None:
    with pytest.raises(InvalidArgument):
        make_checkpoint("exec_a", [pin("decision", "bad \ud800 text")])
    bad = msgspec.structs.replace(outcome(), summary="bad \ud800 text")
    projected = project_context(genesis(THREAD), None, bad).snapshot
    assert projected.outcomes[0].summary == "bad ? text"


# -- tamper evidence (invariant 3) ------------------------------------------------------


def test_changed_snapshot_bytes_raise_tampered_invariant_3() -> None:
    first = run(genesis(THREAD), "exec_a", pin("decision", "x"))
    data, digest = snapshot_bytes(first), snapshot_digest(first)
    assert verify_snapshot(data, digest, snapshot_digest(genesis(THREAD))) == first
    with pytest.raises(ThreadContextTampered) as caught:
        verify_snapshot(data.replace(b'"x"', b'"y"'), digest, snapshot_digest(genesis(THREAD)))
    assert caught.value.data["revision"] == 1


def test_verify_link_checks_bytes_and_link_without_re_encoding_invariant_3() -> None:
    first = run(genesis(THREAD), "exec_a")
    data, digest = snapshot_bytes(first), snapshot_digest(first)
    previous = snapshot_digest(genesis(THREAD))
    link = verify_link(data, digest, previous)
    assert (link.thread_id, link.revision, link.previous_digest) == (THREAD, 1, previous)
    with pytest.raises(ThreadContextTampered):
        verify_link(data, digest, "sha256:" + "0" * 64)
    forged = data.replace(b"exec_a", b"exec_b")
    with pytest.raises(ThreadContextTampered):
        verify_link(forged, digest, previous)


def test_broken_chain_link_raises_tampered_invariant_3() -> None:
    first = run(genesis(THREAD), "exec_a")
    with pytest.raises(ThreadContextTampered):
        verify_snapshot(snapshot_bytes(first), snapshot_digest(first), "sha256:" + "0" * 64)


def test_non_canonical_bytes_raise_tampered() -> None:
    first = run(genesis(THREAD), "exec_a")
    pretty = msgspec.json.format(snapshot_bytes(first))
    with pytest.raises(ThreadContextTampered):
        verify_snapshot(pretty, "sha256:" + __import__("hashlib").sha256(pretty).hexdigest(), None)


def test_verify_chain_rejects_an_edited_or_missing_revision() -> None:
    chain = [genesis(THREAD)]
    for i in range(3):
        chain.append(run(chain[-1], f"exec_{i}", pin("decision", f"d{i}", f"exec_{i}")))
    pairs = [(s, snapshot_digest(s)) for s in chain]
    verify_chain(pairs)
    edited = msgspec.structs.replace(chain[2], degraded=True)
    with pytest.raises(ThreadContextTampered):
        verify_chain([*pairs[:2], (edited, snapshot_digest(edited)), pairs[3]])
    with pytest.raises(ThreadContextTampered):
        verify_chain([pairs[0], pairs[1], pairs[3]])


def test_decode_snapshot_round_trips() -> None:
    first = run(genesis(THREAD), "exec_a", pin("open-item", "é \n \u2028"))
    assert decode_snapshot(snapshot_bytes(first)) == first


# -- properties -------------------------------------------------------------------------

KINDS: list[PinKind] = [
    "objective",
    "decision",
    "constraint",
    "open-item",
    "next-action",
    "resolve",
]
texts = st.one_of(
    st.sampled_from(["fix A", "fix B", "use sqlite", "allowedTools: Bash(*)", "ship"]),
    st.text(min_size=1, max_size=120).filter(str.strip),
    st.text(alphabet='ab\n"\\\x01é', min_size=300, max_size=900),
)


@st.composite
def runs(draw: st.DrawFn) -> list[tuple[list[tuple[PinKind, str]], str, str]]:
    """A thread's life: per root, its pins, a checkpoint fate and an outcome status."""
    return draw(
        st.lists(
            st.tuples(
                st.lists(st.tuples(st.sampled_from(KINDS), texts), max_size=8),
                st.sampled_from(["intact", "intact", "intact", "missing", "forged"]),
                st.sampled_from(["completed", "failed", "cancelled", "interrupted"]),
            ),
            min_size=1,
            max_size=12,
        )
    )


def checkpoint_for(index: int, pins: list[tuple[PinKind, str]], fate: str) -> Checkpoint | None:
    execution = f"exec_{index:03d}"
    made = make_checkpoint(
        execution, [pin(kind, text, execution, f"t{index}") for kind, text in pins]
    )
    if fate == "missing":
        return None
    if fate == "forged":
        return msgspec.structs.replace(
            made, pins=(*made.pins, pin("decision", "forged", execution))
        )
    return made


def play(life: list[tuple[list[tuple[PinKind, str]], str, str]]) -> list[projector.Projection]:
    snapshot, projections = genesis(THREAD), []
    for index, (pins, fate, status) in enumerate(life):
        projection = project_context(
            snapshot, checkpoint_for(index, pins, fate), outcome(f"exec_{index:03d}", status)
        )
        projections.append(projection)
        snapshot = projection.snapshot
    return projections


@given(runs())
@settings(max_examples=60, deadline=None)
def test_projection_is_deterministic_invariant_6(
    life: list[tuple[list[tuple[PinKind, str]], str, str]],
) -> None:
    with small_caps(4500, 400):
        first, second = play(life), play(life)
    assert [snapshot_bytes(p.snapshot) for p in first] == [
        snapshot_bytes(p.snapshot) for p in second
    ]
    assert [p.compaction for p in first] == [p.compaction for p in second]


@given(runs())
@settings(max_examples=80, deadline=None)
def test_cap_attribution_chain_and_degradation_hold_for_any_history(
    life: list[tuple[list[tuple[PinKind, str]], str, str]],
) -> None:
    with small_caps(4500, 400):
        projections = play(life)
    executions = {f"exec_{i:03d}" for i in range(len(life))}
    pairs = [(genesis(THREAD), snapshot_digest(genesis(THREAD)))]
    for projection, (_, fate, _) in zip(projections, life, strict=True):
        snapshot = projection.snapshot
        assert len(snapshot_bytes(snapshot)) <= 4500
        assert projection.degraded == (fate != "intact") == snapshot.degraded
        for line in all_lines(snapshot):
            assert line.source_execution_id in executions
        if projection.degraded:
            own = [
                line
                for line in all_lines(snapshot)
                if line.source_execution_id == snapshot.outcomes[-1].source_execution_id
            ]
            assert own == [snapshot.outcomes[-1]]
        verify_snapshot(snapshot_bytes(snapshot), snapshot_digest(snapshot), pairs[-1][1])
        pairs.append((snapshot, snapshot_digest(snapshot)))
    verify_chain(pairs)


@given(runs())
@settings(max_examples=80, deadline=None)
def test_truncation_drops_lines_in_the_written_order(
    life: list[tuple[list[tuple[PinKind, str]], str, str]],
) -> None:
    snapshot = genesis(THREAD)
    with small_caps(4500, 400):
        for index, (pins, fate, status) in enumerate(life):
            execution = f"exec_{index:03d}"
            args = (snapshot, checkpoint_for(index, pins, fate), outcome(execution, status))
            projection = project_context(*args)
            with small_caps(10**9, 400):
                uncapped = project_context(*args).snapshot
            record = projection.compaction
            event(f"dropped={record is not None and record.dropped_count > 0}")
            if record is not None and record.dropped_count:
                expected = [d.line for d in drop_order(uncapped)][: record.dropped_count]
                assert list(record.dropped) == expected
                ranks = [[kind for _, kind in DROP_ORDER].index(d.kind) for d in record.dropped]
                assert ranks == sorted(ranks)
            assert projection.snapshot.objective == uncapped.objective
            assert projection.snapshot.outcomes[-1] == uncapped.outcomes[-1]
            snapshot = projection.snapshot


def test_worst_case_lines_still_fit_the_cap() -> None:
    # Longest ids and times, escape-heavy text (6 bytes a character), full compaction
    # history: the objective and the newest outcome must still fit under 32 KiB.
    def label(i: int) -> str:
        return f"exec_{i:03d}_" + "x" * (projector.MAX_LABEL_CHARS - 9)

    heavy = "\x01" * 5000
    snapshot = genesis("thread_" + "t" * 200)
    for i in range(12):
        execution = label(i)
        pins = [pin("objective", heavy, execution, "a" * 128)]
        pins += [pin("decision", f"{j}{heavy}", execution, "a" * 128) for j in range(6)]
        ended = msgspec.structs.replace(outcome(execution), summary=heavy, at="b" * 128)
        projection = project_context(snapshot, make_checkpoint(execution, pins), ended)
        snapshot = projection.snapshot
        assert len(snapshot_bytes(snapshot)) <= CONTEXT_CAP_BYTES
        assert snapshot.objective is not None and snapshot.outcomes[-1].summary is not None
    assert len(snapshot.compactions) == projector.COMPACTIONS_KEPT
