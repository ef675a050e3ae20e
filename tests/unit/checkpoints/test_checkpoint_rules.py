"""The pure rules of file checkpoints: sizes and the `[checkpoints]` table, ref names, the
restore plan read from git's raw diff, and what retention drops."""

from __future__ import annotations

from typing import NoReturn

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alpd.domain.checkpoints.changes import parse_numstat, parse_raw, restore_plan
from alpd.domain.checkpoints.entries import (
    Entry,
    Note,
    Skipped,
    decode_note,
    encode_note,
    expired,
    over_cap,
    parse_ref,
    ref_of,
)
from alpd.domain.checkpoints.settings import (
    CheckpointSettings,
    parse_checkpoint_settings,
    parse_size,
)


class Refused(Exception):
    pass


def fail(path: tuple[str, ...], message: str) -> NoReturn:
    raise Refused(".".join(path), message)


def test_sizes_read_as_du_does() -> None:
    assert parse_size("2GB") == 2 * 1024**3
    assert parse_size("50 mb") == 50 * 1024**2
    assert parse_size("1.5K") == 1536
    assert parse_size(4096) == 4096
    for bad in ("lots", -1, True, "2 PB"):
        with pytest.raises(ValueError):
            parse_size(bad)


def test_the_table_is_read_with_defaults_and_typos_refused() -> None:
    assert parse_checkpoint_settings(fail, None) == CheckpointSettings()
    settings = parse_checkpoint_settings(fail, {"keep_roots": 5, "max_bytes": "10MB"})
    assert settings.keep_roots == 5 and settings.max_bytes == 10 * 1024**2
    for table in ({"keep_root": 1}, {"keep_roots": 0}, {"max_bytes": "x"}, {"enabled": "no"}):
        with pytest.raises(Refused):
            parse_checkpoint_settings(fail, table)


@given(
    st.from_regex(r"[A-Za-z0-9_-]{1,40}", fullmatch=True),
    st.integers(1, 10**6),
    st.sampled_from(["pre", "post"]),
)
def test_a_ref_names_its_thread_step_and_phase(thread: str, root: int, phase: str) -> None:
    for step in (str(root), f"restore-{root}"):
        assert parse_ref(ref_of(thread, step, phase)) == (thread, step, phase)  # type: ignore[arg-type]


def test_a_ref_never_leaves_refs_alp() -> None:
    for thread, step in (("../x", "1"), ("a/b", "1"), ("t", "1/../../heads/main")):
        with pytest.raises(ValueError):
            ref_of(thread, step, "pre")
    assert parse_ref("refs/heads/main") is None


def test_a_note_round_trips_through_a_commit_message() -> None:
    note = Note(
        thread_id="thr_1",
        step="2",
        phase="post",
        at="2026-01-01T00:00:00.000Z",
        workspace="/w",
        skipped=(Skipped("big.bin", "large", 9),),
    )
    assert decode_note(encode_note(note)) == note
    assert decode_note("not a note") is None


RAW = (
    b":100644 100644 aaa bbb M\0kept.txt\0"
    b":000000 100644 000 ccc A\0back.txt\0"
    b":100644 000000 ddd 000 D\0made.txt\0"
    b":160000 000000 eee 000 D\0sub\0"
)


def test_a_restore_deletes_created_files_first_then_writes_and_never_touches_a_nested_repo() -> (
    None
):
    plan = restore_plan(parse_raw(RAW))
    assert [(s.path, s.action, s.why) for s in plan] == [
        ("made.txt", "delete", "created"),
        ("kept.txt", "write", "modified"),
        ("back.txt", "write", "deleted"),
        ("sub", "skip", "nested-repository"),
    ]


def test_numstat_counts_lines_and_marks_binary_files() -> None:
    counts = parse_numstat(b"3\t1\ta.txt\0-\t-\tb.bin\0")
    assert (counts["a.txt"].added, counts["a.txt"].deleted) == (3, 1)
    assert counts["b.bin"].added is None


entries = st.lists(
    st.builds(
        Entry,
        st.just("t"),
        st.integers(1, 10**6).map(str),
        st.integers(0, 100 * 86_400),
        st.just(("r",)),
    ),
    unique_by=lambda e: e.step,
    max_size=30,
)


@given(entries, st.integers(1, 10), st.integers(1, 60))
def test_retention_keeps_the_newest_young_steps(
    found: list[Entry], keep_roots: int, keep_days: int
) -> None:
    now = 100 * 86_400
    dropped = expired(found, keep_roots=keep_roots, keep_days=keep_days, now=now)
    kept = [e for e in found if e not in dropped]
    assert len(kept) <= keep_roots
    assert all(e.time >= now - keep_days * 86_400 for e in kept)
    if kept and dropped:
        assert (
            min(e.time for e in kept)
            >= max(e.time for e in dropped if e.time >= now - keep_days * 86_400)
            if any(e.time >= now - keep_days * 86_400 for e in dropped)
            else True
        )


@given(entries)
def test_over_the_cap_the_oldest_half_goes_and_the_newest_stays(found: list[Entry]) -> None:
    going = over_cap(found)
    left = [e for e in found if e not in going]
    if found:
        assert left and max(found, key=lambda e: (e.time, e.at, e.thread_id, e.step)) in left
        assert len(left) == max(1, len(found) // 2)
