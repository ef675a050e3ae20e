"""Claude Code transcript reader against the real CLI's transcripts in tests/fixtures."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alpd.domain.history.transcripts import (
    OUTPUT_TAIL_BYTES,
    Entry,
    ParseResult,
    output_digest,
    read_claude,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "runtimes" / "claude"

PLAIN = "e3d6ce56-3460-480d-999d-16439ea442fb"
TOOL = "5c8d6878-df77-4e19-930e-dfb3c1a2404b"
REFUSED = "8740e209-5d4c-48dd-847c-259f4320371b"
RESUMED = "d2b9855f-6a65-498b-9a15-10cbe5c9c069"
FORK = "4a3bca85-6ad3-4d20-b8bb-637e07fbaa03"
API_ERROR = "c48e191a-e33c-4274-9056-08252b309aff"

# Counted by hand from the files (one line per user/assistant content block; see the
# fixtures README for what each run did).
EXPECTED: dict[str, dict[str, int]] = {
    PLAIN: {"prompt": 1, "reply": 1},
    "56bf1e88-8a2d-41d1-9af3-d8bdf9f2b950": {"prompt": 1, "reply": 1},
    TOOL: {"prompt": 1, "reply": 2, "tool_call": 1, "tool_result": 1},
    REFUSED: {"prompt": 1, "reply": 2, "tool_call": 1, "tool_result": 1},
    "309e4ccb-5605-4b32-9dad-ceb89986512e": {
        "prompt": 1,
        "reply": 2,
        "tool_call": 1,
        "tool_result": 1,
    },
    RESUMED: {"prompt": 2, "reply": 3, "tool_call": 1, "tool_result": 1},
    FORK: {"prompt": 4, "reply": 5, "tool_call": 1, "tool_result": 1},
    "b03e2c91-e83c-44e4-aad7-6394cb451865": {
        "prompt": 2,
        "reply": 3,
        "tool_call": 1,
        "tool_result": 1,
    },
    API_ERROR: {"prompt": 1, "error": 1},
}


def fixture(session: str) -> bytes:
    return (FIXTURES / f"{session}.jsonl").read_bytes()


def read_in_pieces(data: bytes, cuts: list[int]) -> tuple[list[Entry], ParseResult]:
    """Feed the reader the file as it would grow: up to each cut, from its last ``consumed``."""
    entries: list[Entry] = []
    consumed = 0
    session_id: str | None = None
    result = read_claude(b"")
    for cut in [*sorted(cuts), len(data)]:
        if cut < consumed:
            continue
        result = read_claude(data[consumed:cut], base_offset=consumed, session_id=session_id)
        assert result.skipped == 0
        entries.extend(result.entries)
        consumed, session_id = result.consumed, result.session_id
    return entries, result


def test_fixture_set_is_complete() -> None:
    assert {path.stem for path in FIXTURES.glob("*.jsonl")} == set(EXPECTED)


@pytest.mark.parametrize("session", sorted(EXPECTED))
def test_fixture_parses_with_exact_entry_counts(session: str) -> None:
    data = fixture(session)
    result = read_claude(data)
    assert result.skipped == 0
    assert result.consumed == len(data)
    assert result.session_id == session
    assert Counter(entry.kind for entry in result.entries) == EXPECTED[session]
    assert all(entry.session_id == session for entry in result.entries)
    native_ids = [entry.native_id for entry in result.entries]
    assert len(set(native_ids)) == len(native_ids)


def test_native_ids_are_the_line_uuids() -> None:
    data = fixture(TOOL)
    uuids = {
        line["uuid"]
        for line in map(msgspec.json.decode, data.splitlines())
        if line["type"] in ("user", "assistant")
    }
    assert {entry.native_id for entry in read_claude(data).entries} == uuids


def test_tool_round_links_call_and_result() -> None:
    prompt, intro, call, result, reply = read_claude(fixture(TOOL)).entries
    assert (prompt.role, prompt.text) == ("user", "please USE_BASH: echo hello")
    assert (intro.kind, intro.model) == ("reply", "claude-opus-5-5")
    assert call.tool_name == "Bash"
    assert call.tool_input is not None
    assert msgspec.json.decode(call.tool_input) == {
        "command": "echo hello",
        "description": "Run scripted command",
    }
    assert (result.role, result.call_id, result.is_error) == ("tool", call.call_id, False)
    assert result.output_tail == "hello"
    assert result.output_sha256 == output_digest("hello")
    assert result.text == ""
    assert reply.text == "FAKE-CLAUDE: tool result was: hello"
    assert prompt.timestamp == "2026-11-30T05:40:44.805Z"


def test_refused_tool_result_is_marked_error() -> None:
    results = [e for e in read_claude(fixture(REFUSED)).entries if e.kind == "tool_result"]
    assert len(results) == 1
    assert results[0].is_error
    assert results[0].output_tail is not None
    assert "needs approval" in results[0].output_tail


def test_api_error_entry_is_an_error_not_a_reply() -> None:
    prompt, error = read_claude(fixture(API_ERROR)).entries
    assert prompt.kind == "prompt"
    assert (error.role, error.kind, error.model) == ("system", "error", "<synthetic>")
    assert error.text.startswith("API Error: Connection refused")


def test_usage_counts_each_response_once() -> None:
    # Both content-block lines of the tool-using response repeat its usage; the CLI's own
    # cost-state total is the check: 12330 + 12414 input tokens over two responses.
    result = read_claude(fixture(TOOL))
    assert result.total_usage.input_tokens == 24744
    assert result.total_usage.output_tokens == 24
    assert sum(1 for e in result.entries if e.usage is not None) == 2
    assert result.cost_usd == pytest.approx(0.099456)


def test_cost_is_the_last_cost_state_of_the_read() -> None:
    assert read_claude(fixture(RESUMED)).cost_usd == pytest.approx(0.149336)
    assert read_claude(fixture(API_ERROR)).cost_usd == 0


def test_fork_shares_native_ids_and_content_with_parent() -> None:
    parent = {e.native_id: e for e in read_claude(fixture(RESUMED)).entries}
    fork = read_claude(fixture(FORK)).entries
    shared = [e for e in fork if e.native_id in parent]
    # The fork copied the parent's two turns (7 entries) and added two of its own.
    assert [e.kind for e in shared] == [
        "prompt",
        "reply",
        "prompt",
        "reply",
        "tool_call",
        "tool_result",
        "reply",
    ]
    assert [e.native_id for e in shared] == list(parent)
    for copy in shared:
        assert copy.session_id == FORK
        original = parent[copy.native_id]
        assert msgspec.structs.replace(copy, session_id=RESUMED, offset=original.offset) == (
            original
        )
    assert [e.text for e in fork if e.native_id not in parent] == [
        "forked turn",
        "FAKE-CLAUDE: hi (request #12)",
        "continued turn",
        "FAKE-CLAUDE: hi (request #13)",
    ]


def corrupt_line(data: bytes, index: int) -> bytes:
    lines = data.split(b"\n")
    lines[index] = lines[index][: len(lines[index]) // 2]
    return b"\n".join(lines)


def test_corrupt_conversation_line_is_skipped_and_counted() -> None:
    corrupted = corrupt_line(fixture(TOOL), 2)  # the user prompt line
    result = read_claude(corrupted)
    assert (result.skipped, result.consumed) == (1, len(corrupted))
    assert Counter(e.kind for e in result.entries) == {"reply": 2, "tool_call": 1, "tool_result": 1}


def test_corrupt_bookkeeping_line_is_skipped_and_counted() -> None:
    result = read_claude(corrupt_line(fixture(TOOL), 13))  # api-request-shape
    assert result.skipped == 1
    assert len(result.entries) == 5


def test_unknown_line_type_counts_as_skipped() -> None:
    line = b'{"type":"from-a-future-version","uuid":"u1","sessionId":"s"}\n'
    result = read_claude(line)
    assert (result.entries, result.skipped, result.consumed) == ([], 1, len(line))


def test_blank_lines_are_neither_entries_nor_skipped() -> None:
    result = read_claude(b"\n\r\n  \n" + fixture(PLAIN))
    assert result.skipped == 0
    assert len(result.entries) == 2


def test_unterminated_last_line_is_left_for_the_next_read() -> None:
    data = fixture(TOOL)
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    partial = data[: len(data) - 1]  # the final cost-state line lost its newline
    result = read_claude(partial)
    assert (result.skipped, result.consumed) == (0, last_start)
    assert result.cost_usd is None
    rest = read_claude(data[result.consumed :], base_offset=result.consumed)
    assert (rest.skipped, rest.consumed, rest.entries) == (0, len(data), [])
    assert rest.cost_usd == pytest.approx(0.099456)


def test_half_written_entry_appears_once_complete() -> None:
    data = fixture(PLAIN)
    reply_line = next(line for line in data.split(b"\n") if b'"type":"assistant"' in line)
    cut = data.index(reply_line) + len(reply_line) // 2
    first = read_claude(data[:cut])
    assert [e.kind for e in first.entries] == ["prompt"]
    second = read_claude(data[first.consumed :], base_offset=first.consumed)
    assert [e.kind for e in second.entries] == ["reply"]


@settings(max_examples=200, deadline=None)
@given(
    session=st.sampled_from(sorted(EXPECTED)),
    fractions=st.lists(st.floats(min_value=0, max_value=1), max_size=4),
)
def test_incremental_reads_give_the_same_entries_as_one_read(
    session: str, fractions: list[float]
) -> None:
    data = fixture(session)
    whole = read_claude(data)
    cuts = [int(fraction * len(data)) for fraction in fractions]
    entries, last = read_in_pieces(data, cuts)
    assert entries == whole.entries
    assert last.consumed == len(data)


@settings(max_examples=100, deadline=None)
@given(cut=st.integers(min_value=0, max_value=len(fixture(TOOL))))
def test_any_single_split_of_a_tool_round_reads_the_same(cut: int) -> None:
    data = fixture(TOOL)
    entries, _ = read_in_pieces(data, [cut])
    assert entries == read_claude(data).entries


def tool_result_line(output: str) -> bytes:
    line = {
        "type": "user",
        "uuid": "u-long",
        "sessionId": "s-long",
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": output}],
        },
    }
    return msgspec.json.encode(line) + b"\n"


def test_long_output_keeps_a_utf8_tail_and_the_digest_of_the_whole() -> None:
    output = "head\n" + "é€😀x" * 1000 + "\nthe end"
    (entry,) = read_claude(tool_result_line(output)).entries
    assert entry.output_tail is not None
    tail = entry.output_tail.encode()
    assert OUTPUT_TAIL_BYTES - 3 <= len(tail) <= OUTPUT_TAIL_BYTES
    assert output.endswith(entry.output_tail)
    assert entry.output_sha256 == output_digest(output)


def test_tool_result_block_list_is_joined() -> None:
    line = tool_result_line("x").replace(
        b'"content":"x"', b'"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]'
    )
    (entry,) = read_claude(line).entries
    assert entry.output_tail == "a\nb"


def test_several_blocks_on_one_line_get_distinct_stable_ids() -> None:
    line = {
        "type": "assistant",
        "uuid": "u-multi",
        "sessionId": "s",
        "message": {
            "model": "m",
            "content": [
                {"type": "thinking", "thinking": "hmm"},
                {"type": "text", "text": "a"},
                {"type": "tool_use", "id": "t", "name": "Bash", "input": {}},
            ],
            "usage": {"input_tokens": 5, "output_tokens": 2},
        },
    }
    result = read_claude(msgspec.json.encode(line) + b"\n")
    assert [e.native_id for e in result.entries] == ["u-multi", "u-multi:1"]
    assert result.entries[0].usage == result.total_usage
    assert result.total_usage.input_tokens == 5
