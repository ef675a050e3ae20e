"""Codex CLI rollout reader against the real CLI's rollouts in tests/fixtures."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alpd.domain.history.transcripts import (
    Entry,
    HistoryBase,
    MissingSessionIdError,
    ParseResult,
    Usage,
    output_digest,
    read_codex,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "runtimes" / "codex"

PLAIN = "01a22af8-b6c1-72c2-a5ed-92afebc8ada1"
TOOL = "01a22af8-b7cc-7c33-825d-7962c4e1a179"
FORK = "01a22af8-bacd-7f23-88a7-5634ea48a7af"
REFUSED = "01a22af8-bcc7-7cf0-991c-67ab8d3d6cb1"
BYPASSED = "01a22af8-be10-74f1-b2fe-ec01938cb73d"
DOWN = "01a22af8-c0b6-79e2-8da9-09e30bef4018"

# Counted by hand: one entry per real prompt, assistant message, function_call,
# function_call_output and failed task; harness messages and events give none.
EXPECTED: dict[str, dict[str, int]] = {
    PLAIN: {"prompt": 1, "reply": 1},
    TOOL: {"prompt": 2, "reply": 2, "tool_call": 1, "tool_result": 1},
    FORK: {"prompt": 2, "reply": 2},
    REFUSED: {"prompt": 1, "reply": 1, "tool_call": 1, "tool_result": 1},
    BYPASSED: {"prompt": 1, "reply": 1, "tool_call": 1, "tool_result": 1},
    DOWN: {"prompt": 1, "error": 1},
}


def fixture(session: str) -> bytes:
    (path,) = FIXTURES.glob(f"rollout-*-{session}.jsonl")
    return path.read_bytes()


def read_in_pieces(data: bytes, cuts: list[int]) -> tuple[list[Entry], ParseResult]:
    """Feed the reader the file as it would grow, carrying session id and model along."""
    entries: list[Entry] = []
    consumed = 0
    session_id: str | None = None
    model: str | None = None
    result = read_codex(b"")
    for cut in [*sorted(cuts), len(data)]:
        if cut < consumed:
            continue
        result = read_codex(
            data[consumed:cut], base_offset=consumed, session_id=session_id, model=model
        )
        assert result.skipped == 0
        entries.extend(result.entries)
        consumed, session_id, model = result.consumed, result.session_id, result.model
    return entries, result


def test_fixture_set_is_complete() -> None:
    assert {path.stem[-36:] for path in FIXTURES.glob("*.jsonl")} == set(EXPECTED)


@pytest.mark.parametrize("session", sorted(EXPECTED))
def test_fixture_parses_with_exact_entry_counts(session: str) -> None:
    data = fixture(session)
    result = read_codex(data)
    assert result.skipped == 0
    assert result.consumed == len(data)
    assert result.session_id == session
    assert result.model == "gpt-fake"
    assert result.cost_usd is None
    assert Counter(entry.kind for entry in result.entries) == EXPECTED[session]
    assert all(entry.session_id == session for entry in result.entries)
    native_ids = [entry.native_id for entry in result.entries]
    assert len(set(native_ids)) == len(native_ids)


def test_tool_round_uses_item_ids_and_links_call_and_result() -> None:
    prompt, call, result, reply, prompt2, reply2 = read_codex(fixture(TOOL)).entries
    assert (prompt.native_id, prompt.text) == (
        "msg_01a22af8-b7f4-7fb2-b1d5-ad9662927dd8",
        "please USE_SHELL: echo hello",
    )
    assert (call.native_id, call.tool_name, call.role) == (
        "fc_fake_e31deea4896b47e5",
        "exec_command",
        "assistant",
    )
    assert call.tool_input is not None
    assert msgspec.json.decode(call.tool_input) == {"cmd": "echo hello"}
    assert result.native_id == "fco_01a22af8-b877-75c3-8fb2-aab1917e0d42"
    assert (result.role, result.call_id) == ("tool", call.call_id)
    assert result.output_tail is not None
    assert result.output_tail.endswith("Output:\nhello\n")
    assert result.output_sha256 == output_digest(result.output_tail)
    assert (reply.native_id, reply.model) == ("msg_fake_bb65256043344207", "gpt-fake")
    assert prompt2.text == "second turn via resume"
    assert reply2.text == "FAKE-CODEX: hi (request #4)"
    assert reply2.timestamp == "2026-11-30T05:41:13.369Z"


def test_harness_messages_are_not_entries() -> None:
    texts = [e.text for e in read_codex(fixture(PLAIN)).entries]
    assert not any("<environment_context>" in t or "<skills_instructions>" in t for t in texts)


def test_sandbox_refusal_still_gives_the_tool_result() -> None:
    results = [e for e in read_codex(fixture(REFUSED)).entries if e.kind == "tool_result"]
    assert len(results) == 1
    assert results[0].output_tail is not None
    assert "Read-only file system" in results[0].output_tail


def test_failed_turn_gives_an_error_entry_keyed_by_ordinal() -> None:
    prompt, error = read_codex(fixture(DOWN)).entries
    assert prompt.kind == "prompt"
    assert (error.role, error.kind, error.text) == (
        "system",
        "error",
        "Connection failed: error sending request",
    )
    assert error.native_id == f"{DOWN}:9"


def test_usage_sums_the_token_count_events() -> None:
    # The last token_count's running total (30028 in / 36 out) equals the per-response sum.
    result = read_codex(fixture(TOOL))
    assert result.total_usage == Usage(input_tokens=30028, output_tokens=36)
    assert all(entry.usage is None for entry in result.entries)


def test_fork_exposes_history_base_and_invents_no_parent_entries() -> None:
    parent_ids = {e.native_id for e in read_codex(fixture(TOOL)).entries}
    fork = read_codex(fixture(FORK))
    assert fork.history_base == HistoryBase(
        parent_session_id=TOOL, end_ordinal_exclusive=29, end_byte_offset=45813
    )
    assert not parent_ids & {e.native_id for e in fork.entries}
    assert [e.text for e in fork.entries if e.kind == "prompt"] == [
        "forked turn",
        "turn via resume --last",
    ]


def test_non_fork_has_no_history_base() -> None:
    assert read_codex(fixture(TOOL)).history_base is None


def corrupt_line(data: bytes, index: int) -> bytes:
    lines = data.split(b"\n")
    lines[index] = lines[index][: len(lines[index]) // 2]
    return b"\n".join(lines)


def test_corrupt_conversation_line_is_skipped_and_counted() -> None:
    corrupted = corrupt_line(fixture(TOOL), 9)  # the function_call
    result = read_codex(corrupted)
    assert (result.skipped, result.consumed) == (1, len(corrupted))
    assert Counter(e.kind for e in result.entries) == {"prompt": 2, "reply": 2, "tool_result": 1}


def test_corrupt_event_line_is_skipped_and_counted() -> None:
    result = read_codex(corrupt_line(fixture(TOOL), 13))  # a token_count
    assert result.skipped == 1
    assert len(result.entries) == 6


def test_unknown_item_type_counts_as_skipped() -> None:
    line = b'{"type":"response_item","ordinal":1,"payload":{"type":"hologram","id":"h"}}\n'
    result = read_codex(line, session_id="s")
    assert (result.entries, result.skipped) == ([], 1)


def test_unterminated_last_line_is_left_for_the_next_read() -> None:
    data = fixture(DOWN)
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    first = read_codex(data[:-1])
    assert (first.skipped, first.consumed) == (0, last_start)
    assert [e.kind for e in first.entries] == ["prompt"]
    rest = read_codex(data[first.consumed :], base_offset=first.consumed, session_id=DOWN)
    assert [e.kind for e in rest.entries] == ["error"]
    assert rest.entries[0].native_id == f"{DOWN}:9"


def test_incremental_read_without_session_id_is_refused() -> None:
    data = fixture(TOOL)
    cut = data.index(b"\n") + 1  # just past session_meta
    with pytest.raises(MissingSessionIdError):
        read_codex(data[cut:], base_offset=cut)


def test_line_without_ordinal_is_keyed_by_its_byte_offset() -> None:
    line = b'{"type":"event_msg","payload":{"type":"error","message":"boom"}}\n'
    result = read_codex(b"\n" + line, base_offset=100, session_id="s")
    (entry,) = result.entries
    assert (entry.native_id, entry.text, entry.offset) == ("s@101", "boom", 101)


def test_older_output_object_marks_failure() -> None:
    payload = {
        "type": "function_call_output",
        "call_id": "c",
        "output": {"content": "denied", "success": False},
    }
    line = msgspec.json.encode({"type": "response_item", "ordinal": 3, "payload": payload})
    (entry,) = read_codex(line + b"\n", session_id="s").entries
    assert (entry.native_id, entry.is_error, entry.output_tail) == ("s:3", True, "denied")


@settings(max_examples=200, deadline=None)
@given(
    session=st.sampled_from(sorted(EXPECTED)),
    fractions=st.lists(st.floats(min_value=0, max_value=1), max_size=4),
)
def test_incremental_reads_give_the_same_entries_as_one_read(
    session: str, fractions: list[float]
) -> None:
    data = fixture(session)
    whole = read_codex(data)
    entries, last = read_in_pieces(data, [int(f * len(data)) for f in fractions])
    assert entries == whole.entries
    assert last.consumed == len(data)


@settings(max_examples=100, deadline=None)
@given(cut=st.integers(min_value=0, max_value=len(fixture(DOWN))))
def test_any_single_split_of_a_failed_turn_reads_the_same(cut: int) -> None:
    data = fixture(DOWN)
    entries, _ = read_in_pieces(data, [cut])
    assert entries == read_codex(data).entries
