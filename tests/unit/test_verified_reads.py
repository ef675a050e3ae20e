"""`VerifiedReads`: a check's result is reused only for a read equal in every value to the
one checked; a change anywhere is checked again, a failure is never kept, the weight is
bounded."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alpd.domain.verified_reads import VerifiedReads

Row = tuple[object, ...]


class Tampered(Exception):
    pass


class Counting:
    """A digest check over (id, digest, text): passes when the digest is the text's."""

    def __init__(self) -> None:
        self.calls: list[Row] = []

    def __call__(self, row: Row) -> str:
        self.calls.append(row)
        if row[1] != f"d:{row[2]}":
            raise Tampered(row[0])
        return f"ok {row[0]}"


def reads(check: Counting, max_weight: int = 1000) -> VerifiedReads[int, Row, str]:
    return VerifiedReads(check, lambda row: len(str(row[2])), max_weight)


def test_the_same_read_again_is_not_checked_again() -> None:
    check = Counting()
    verified = reads(check)
    assert verified(1, (1, "d:hello", "hello")) == "ok 1"
    assert verified(1, (1, "d:hello", "hello")) == "ok 1"
    assert check.calls == [(1, "d:hello", "hello")]


@pytest.mark.parametrize("changed", [(1, "d:hello", "hellO"), (1, "d:hellO", "hellO"),
                                     (1, "d:hello", "hello", None)])  # fmt: skip
def test_a_read_changed_in_any_value_is_checked_again(changed: Row) -> None:
    check = Counting()
    verified = reads(check)
    verified(1, (1, "d:hello", "hello"))
    with contextlib.suppress(Tampered):
        verified(1, changed)
    assert check.calls[-1] == changed and len(check.calls) == 2


def test_a_failed_check_is_never_kept() -> None:
    check = Counting()
    verified = reads(check)
    verified(7, (7, "d:text", "text"))
    for _ in range(3):
        with pytest.raises(Tampered):
            verified(7, (7, "d:text", "text (edited)"))
    assert len(check.calls) == 4
    # the edit undone: the original read is checked afresh (the failure replaced nothing
    # it could be mistaken for), and passes
    assert verified(7, (7, "d:text", "text")) == "ok 7"


def test_the_weight_is_bounded_oldest_dropped_first() -> None:
    check = Counting()
    verified = reads(check, max_weight=10)
    for key in range(5):
        verified(key, (key, "d:abcd", "abcd"))
    assert verified.weight <= 10 and len(verified) == 2
    check.calls.clear()
    verified(4, (4, "d:abcd", "abcd"))
    assert check.calls == []  # the newest is kept
    verified(0, (0, "d:abcd", "abcd"))
    assert check.calls == [(0, "d:abcd", "abcd")]  # the oldest was dropped
    verified(9, (9, "d:" + "x" * 11, "x" * 11))  # heavier than the bound: checked, not kept
    assert len(verified) == 2 and verified.weight <= 10


@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from(["a", "b", "ab"]),
                          st.booleans()), max_size=40))  # fmt: skip
def test_every_answer_is_the_checks_answer_for_that_read(
    steps: list[tuple[int, str, bool]],
) -> None:
    check = Counting()
    verified = reads(check, max_weight=4)
    for key, text, honest in steps:
        row: Row = (key, f"d:{text}" if honest else "d:?", text)
        if honest:
            assert verified(key, row) == f"ok {key}"
        else:
            with pytest.raises(Tampered):
                verified(key, row)
