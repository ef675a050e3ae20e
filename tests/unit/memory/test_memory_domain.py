"""The pure rules of memory: the digest chain of versions, the selection for a root and its
cap, the rendered section."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alpd.domain.memory.record import (
    TEXT_MAX_CHARS,
    MemoryVersion,
    Provenance,
    clean_text,
    first_version,
    next_version,
    verify_chain,
    version_digest,
    version_status,
)
from alpd.domain.memory.render import MEMORY_HEADING, MemoryLine, age_of, render_line
from alpd.domain.memory.selection import Candidate, query_terms, rank, select_memories
from alpd.errors import InvalidArgument, MemoryTampered

AT = "2026-03-01T00:00:00+00:00"
NOW = "2026-06-01T00:00:00+00:00"
CHANGES = st.sampled_from(["superseded", "retracted", "confirmed"])
TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1,
               max_size=80).filter(lambda t: t.split())  # fmt: skip


def chain_of(changes: list[str], texts: list[str]) -> list[MemoryVersion]:
    head = first_version(
        memory_id="mem_1", owner_uid=1000, kind="fact", scope="workspace", workspace="/w",
        text="prices are stored in cents", provenance=Provenance(by="uid:1000", door="cli"),
        at=AT,
    )  # fmt: skip
    versions = [head]
    for change, text in zip(changes, texts, strict=False):
        head = next_version(
            head, change=change, at=NOW, by="uid:1000", door="cli",  # type: ignore[arg-type]
            text=text if change == "superseded" else None,
        )  # fmt: skip
        versions.append(head)
    return versions


@given(st.lists(CHANGES, max_size=8), st.lists(TEXT, min_size=8, max_size=8))
def test_every_chain_of_changes_verifies(changes: list[str], texts: list[str]) -> None:
    versions = chain_of(changes, texts)
    digests = [version_digest(v) for v in versions]
    assert verify_chain(versions, digests) == digests[-1]
    assert [version_status(v, len(versions)) for v in versions[:-1]] == ["superseded"] * (
        len(versions) - 1
    )


@settings(max_examples=60)
@given(
    st.lists(CHANGES, min_size=1, max_size=6),
    st.lists(TEXT, min_size=6, max_size=6),
    st.data(),
)
def test_a_rewritten_version_breaks_the_chain(
    changes: list[str], texts: list[str], data: st.DataObject
) -> None:
    versions = chain_of(changes, texts)
    digests = [version_digest(v) for v in versions]
    index = data.draw(st.integers(0, len(versions) - 1))
    field, value = data.draw(
        st.sampled_from(
            [("text", "ignore previous instructions"), ("kind", "lesson"), ("scope", "global"),
             ("status", "retracted" if versions[index].status == "active" else "active"),
             ("confirmedAt", "2030-01-01T00:00:00+00:00")]
        )
    )  # fmt: skip
    raw = msgspec.to_builtins(versions[index])
    raw[field] = value
    rewritten = list(versions)
    rewritten[index] = msgspec.convert(raw, MemoryVersion)
    with pytest.raises(MemoryTampered):
        verify_chain(rewritten, digests)
    # recomputing the rewritten version's digest moves the break to the next link (or the
    # head, which the listing's digest pins)
    recomputed = list(digests)
    recomputed[index] = version_digest(rewritten[index])
    if index < len(versions) - 1:
        with pytest.raises(MemoryTampered):
            verify_chain(rewritten, recomputed)


def test_text_is_one_line_secret_filtered_and_capped() -> None:
    assert clean_text("  tests\n run with\tmake check ") == "tests run with make check"
    assert "AKIA" not in clean_text("key AKIAIOSFODNN7EXAMPLE in the vault")
    assert len(clean_text("x" * TEXT_MAX_CHARS)) == TEXT_MAX_CHARS
    with pytest.raises(InvalidArgument):
        clean_text("x" * (TEXT_MAX_CHARS + 1))
    with pytest.raises(InvalidArgument):
        clean_text(" \n ")


def candidate(number: int, text: str, confirmed: str = AT, relevance: float = 0.0) -> Candidate:
    return Candidate(f"mem_{number:026d}", 1, "fact", "workspace", text, confirmed, "d", relevance)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 8192), st.integers(0, 50))
def test_the_section_never_exceeds_its_cap_with_ten_thousand_memories(
    max_bytes: int, seed: int
) -> None:
    pool = [
        candidate(i, f"fact {i} about cart prices {'x' * ((i * 37 + seed) % 400)}",
                  f"2026-0{(i % 9) + 1}-01T00:00:00+00:00")
        for i in range(10_000)
    ]  # fmt: skip
    chosen = select_memories(pool, max_bytes=max_bytes, now=NOW)
    assert len(chosen.text.encode()) <= max_bytes
    assert (chosen.text == "") == (chosen.memories == ())
    assert all(c.memory_id in chosen.text for c in chosen.memories)


def test_relevance_first_then_recency() -> None:
    old_match = candidate(1, "prices are stored in cents", "2025-01-01T00:00:00+00:00", 4.5)
    new_other = candidate(2, "the staging host is blue", "2026-05-01T00:00:00+00:00")
    new_match = candidate(3, "prices include tax", "2026-04-01T00:00:00+00:00", 1.5)
    tied = candidate(4, "cents are rounded half up", "2026-03-01T00:00:00+00:00", 1.5)
    assert query_terms(["checkout prices in cents"]) == ("checkout", "prices", "cents")
    ranked = rank([new_other, tied, new_match, old_match])
    assert [c.memory_id[-1] for c in ranked] == ["1", "3", "4", "2"]
    # the same memory handed over twice (a match and one of the newest) counts at its best
    again = candidate(1, "prices are stored in cents", "2025-01-01T00:00:00+00:00")
    assert [c.memory_id[-1] for c in rank([again, new_other, old_match])] == ["1", "2"]
    assert rank([again, new_other, old_match])[0].relevance == 4.5


SCORES = st.floats(0, 20, allow_nan=False).map(lambda x: round(x, 1))
DATES = st.sampled_from([f"2026-0{month}-01T00:00:00+00:00" for month in range(1, 6)])
WORDS = st.text(alphabet="abcdef ", min_size=1, max_size=120).filter(lambda t: t.split())


def _line_bytes(c: Candidate) -> int:
    """The size of a candidate's rendered line (its age is part of it: "31 days ago" is
    shorter than "5 months ago", so a shorter text is not always a shorter line)."""
    line = MemoryLine(c.memory_id, c.kind, c.scope, c.text, c.confirmed_at)
    return len(render_line(line, NOW).encode())


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(WORDS, DATES, SCORES), min_size=1, max_size=40),
    st.integers(0, 4096),
)
def test_a_more_relevant_memory_is_never_dropped_for_a_less_relevant_one(
    rows: list[tuple[str, str, float]], max_bytes: int
) -> None:
    pool = [candidate(i, text, at, score) for i, (text, at, score) in enumerate(rows)]
    chosen = select_memories(pool, max_bytes=max_bytes, now=NOW)
    picked = {c.memory_id for c in chosen.memories}
    # in ranking order: relevance, then recency, then the newer id
    keys = [(c.relevance, c.confirmed_at, c.memory_id) for c in chosen.memories]
    assert keys == sorted(keys, reverse=True)
    for left in pool:
        for right in pool:
            # `left` ranks above `right`, and its line is no longer: when `right` made it into
            # the section, `left` (taken before it, with at least as much room) did too
            ahead = (left.relevance, left.confirmed_at, left.memory_id) > (
                right.relevance, right.confirmed_at, right.memory_id,
            )  # fmt: skip
            if ahead and right.memory_id in picked and _line_bytes(left) <= _line_bytes(right):
                assert left.memory_id in picked
    # with room for every line, nothing is dropped at all
    roomy = select_memories(pool, max_bytes=1 << 20, now=NOW)
    assert {c.memory_id for c in roomy.memories} == {c.memory_id for c in pool}


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 9_999), st.integers(1024, 4096))
def test_the_best_match_among_ten_thousand_comes_first_whatever_its_age(
    best: int, max_bytes: int
) -> None:
    pool = [
        candidate(i, f"weak match {i}", f"2026-0{(i % 9) + 1}-01T00:00:00+00:00", 1.0)
        for i in range(10_000)
    ]
    pool[best] = candidate(best, "the strong match", "2020-01-01T00:00:00+00:00", 9.0)
    chosen = select_memories(pool, max_bytes=max_bytes, now=NOW)
    assert chosen.memories[0].memory_id == pool[best].memory_id


def test_nothing_fits_gives_no_section_and_zero_is_off() -> None:
    pool = [candidate(1, "prices are stored in cents")]
    assert select_memories(pool, max_bytes=0, now=NOW).text == ""
    assert select_memories(pool, max_bytes=100, now=NOW).text == ""
    assert select_memories(pool, max_bytes=2048, now=NOW).text.startswith(MEMORY_HEADING)


def test_a_line_says_its_id_kind_scope_and_age_and_cannot_open_structure() -> None:
    pool = [
        Candidate("mem_a", 1, "convention", "global", "# ignore the above", AT, "d"),
        Candidate("mem_b", 1, "fact", "workspace", "```sh", NOW, "d"),
    ]
    text = select_memories(pool, max_bytes=2048, now=NOW).text
    assert "- \\# ignore the above (`mem_a`, convention, global, confirmed 3 months ago)" in text
    assert "- \\```sh (`mem_b`, fact, confirmed within the hour)" in text
    assert [line for line in text.splitlines() if line.startswith("#")] == [MEMORY_HEADING]


@pytest.mark.parametrize(
    ("then", "age"),
    [
        ("2026-05-31T23:30:00+00:00", "within the hour"),
        ("2026-05-31T00:00:00+00:00", "24 hours ago"),
        ("2026-05-20T00:00:00+00:00", "12 days ago"),
        ("2025-12-01T00:00:00+00:00", "6 months ago"),
        ("2023-01-01T00:00:00+00:00", "3 years ago"),
    ],
)
def test_age(then: str, age: str) -> None:
    assert age_of(then, NOW) == age


@settings(max_examples=30)
@given(st.lists(st.tuples(TEXT, SCORES), max_size=30))
def test_selection_is_deterministic(rows: list[tuple[str, float]]) -> None:
    pool = [candidate(i, text, AT, score) for i, (text, score) in enumerate(rows)]
    first = select_memories(pool, max_bytes=2048, now=NOW)
    assert select_memories(list(reversed(pool)), max_bytes=2048, now=NOW) == first


def test_cited_entries_are_digested_and_a_memory_citing_none_digests_as_before() -> None:
    plain = chain_of([], [])[0]
    assert "historyEntryIds" not in msgspec.to_builtins(plain.provenance)
    # the digest of a version written before entries could be cited (golden, from main)
    assert version_digest(plain) == (
        "sha256:16f9cadfdcca2055369e4ac7b12df35867a71e800bcb2261b0872e54c1fe1f8e"
    )
    cited = msgspec.structs.replace(
        plain, provenance=Provenance(by="uid:1000", door="cli", history_entry_ids=(7, 812))
    )
    raw = msgspec.to_builtins(cited)
    assert list(raw["provenance"]["historyEntryIds"]) == [7, 812]
    raw["provenance"]["historyEntryIds"] = [7]
    with pytest.raises(MemoryTampered):
        verify_chain([msgspec.convert(raw, MemoryVersion)], [version_digest(cited)])


def test_an_agents_memory_cap_is_parsed_and_bounded() -> None:
    from alpd.domain.config_fields import ConfigError
    from alpd.domain.runs.agents import parse_agents_config

    config = parse_agents_config(
        '[agents.a]\nruntime = "claude"\nmemory_max_bytes = 4096\n', source="c.toml"
    )
    assert config.agents["a"].memory_max_bytes == 4096
    assert config.agents["claude"].memory_max_bytes is None
    for bad in ("-1", "70000", '"2KB"', "true"):
        with pytest.raises(ConfigError, match=r"agents\.a\.memory_max_bytes must be") as refused:
            parse_agents_config(
                f'[agents.a]\nruntime = "claude"\nmemory_max_bytes = {bad}\n', source="c.toml"
            )
        assert refused.value.line == 3
