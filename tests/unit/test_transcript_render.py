"""alpctl.transcript_render on the real runtimes' files (tests/fixtures/runtimes): no raw JSON
reaches the reader, the words do; a failed run leads with the runtime's own error line."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from alpctl.render import PLAIN
from alpctl.transcript_render import _block, render_item, render_stream_line
from protocol.runtime_output import first_error_line

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "runtimes"


def _texts(path: Path) -> list[str]:
    """The assistant's text blocks a Claude file holds, as a reader should see them."""
    found = []
    for line in path.read_text().splitlines():
        event = json.loads(line)
        if event.get("type") != "assistant":
            continue
        content = (event.get("message") or {}).get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "text" and block.get("text"):
                found.append(block["text"])
    return found


def test_claude_lines_read_as_words_not_json() -> None:
    for path in sorted((FIXTURES / "claude").glob("*.jsonl")):
        rendered = [render_stream_line(line, 100, PLAIN) for line in path.read_text().splitlines()]
        shown = "\n".join(r for r in rendered if r)
        assert '{"type"' not in shown, path.name
        for text in _texts(path):
            assert " ".join(text.split()[:3]) in " ".join(shown.split()), path.name


def test_codex_lines_read_as_words_not_json() -> None:
    for path in sorted((FIXTURES / "codex").glob("*.jsonl")):
        rendered = [render_stream_line(line, 100, PLAIN) for line in path.read_text().splitlines()]
        assert not any(r and r.lstrip().startswith("{") for r in rendered), path.name


def test_codex_exec_events_show_the_message_and_the_command_on_one_line() -> None:
    message = {"type": "item.completed", "item": {"type": "agent_message", "text": "All done."}}
    command = {"type": "item.completed", "item": {"type": "command_execution",
               "command": "ls -la", "aggregated_output": "a\nb\n", "exit_code": 0}}  # fmt: skip
    assert "All done." in (render_stream_line(json.dumps(message), 80, PLAIN) or "")
    line = render_stream_line(json.dumps(command), 80, PLAIN) or ""
    assert line.count("\n") == 0 and "ls -la" in line and "→ a b" in line
    assert render_stream_line('{"type":"turn.started"}', 80, PLAIN) is None


def test_a_failed_claude_run_leads_with_its_own_error_line() -> None:
    output = "\n".join(
        [
            json.dumps({"type": "system", "subtype": "init", "session_id": "s"}),
            json.dumps(
                {
                    "type": "result",
                    "subtype": "success",
                    "is_error": True,
                    "result": "Not logged in · Please run /login",
                }
            ),
        ]
    )
    assert first_error_line(output) == "Not logged in · Please run /login"
    assert first_error_line("Error: connect ECONNREFUSED\n") == "Error: connect ECONNREFUSED"
    assert first_error_line('{"type":"result","subtype":"success","result":"ok"}') is None


def test_an_item_is_wrapped_to_the_width_with_speaker_and_local_time() -> None:
    item = {"type": "reply", "speaker": "assistant", "text": "word " * 40,
            "at": "2026-11-30T05:00:00Z"}  # fmt: skip
    text = render_item(item, 60, PLAIN)
    assert "assistant" in text.splitlines()[0]
    assert all(len(line) <= 60 for line in text.splitlines())
    tool = {"type": "tool", "tool": {"name": "Bash", "input": "ls", "result": "a"}}
    assert render_item(tool, 80, PLAIN).count("\n") == 0


@given(
    text=st.text(alphabet=st.sampled_from("ab é\t\u00a0\u3000\n\r\x0b.-"), max_size=120),
    head=st.sampled_from(["", " ", "09:41 CET you  ", " " * 18]),
    width=st.integers(min_value=0, max_value=130),
)
def test_a_block_is_what_textwrap_makes_of_it(text: str, head: str, width: int) -> None:
    """`_block`'s short cuts (a line that fits, a paragraph of plain words filled) give
    textwrap's own lines."""
    assert_textwraps(text, head, width)


@given(
    text=st.lists(
        st.lists(st.text(alphabet="abcdéxyz", min_size=1, max_size=14), max_size=40).map(" ".join),
        min_size=1,
        max_size=3,
    ).map("\n".join),
    head=st.sampled_from(["", "09:41 CET you  ", "10:02 CET assistant  ", " " * 18]),
    width=st.integers(min_value=0, max_value=70),
)
def test_a_paragraph_of_words_is_filled_as_textwrap_fills_it(
    text: str, head: str, width: int
) -> None:
    """Plain words parted by single spaces take `_block`'s own fill: the same lines as
    textwrap's, whatever the width, the head and the words' lengths."""
    assert_textwraps(text, head, width)


def assert_textwraps(text: str, head: str, width: int) -> None:
    width_used = max(width, 20)
    indent = " " * min(len(head), max(width_used // 3, 4))
    expected: list[str] = []
    for index, paragraph in enumerate(text.splitlines() or [""]):
        expected.extend(
            textwrap.wrap(
                paragraph,
                width=width_used,
                initial_indent=head if index == 0 else indent,
                subsequent_indent=indent,
                replace_whitespace=False,
                drop_whitespace=True,
            )
            or [head.rstrip() if index == 0 else ""]
        )
    assert _block(head, text, width) == "\n".join(expected)
