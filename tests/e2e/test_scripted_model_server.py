"""The scripted model server on its own: rules, canned replies, recording, SSE framing.

These need no runtime binaries and no network namespace (127.0.0.1 only), so they run
everywhere; the real CLIs exercise the same server in ``test_runtimes_offline.py``.
"""

from __future__ import annotations

import gzip
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from model_server import (
    MAX_SCRIPTED_REPLIES,
    ErrorReply,
    ModelServer,
    TextReply,
    ToolCallReply,
    Usage,
)


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer() as running:
        yield running


def post(
    server: ModelServer, path: str, body: Any, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(
        server.url + path,
        data=data,
        method="POST",
        headers={"Content-Type": "application/json", **(headers or {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, dict(reply.headers), reply.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def sse_events(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    """Parse SSE strictly: every frame is exactly `event:` + `data:` lines, blank-line ended."""
    assert raw.endswith(b"\n\n")
    events = []
    for frame in raw.decode().split("\n\n")[:-1]:
        event_line, data_line = frame.split("\n")
        assert event_line.startswith("event: ") and data_line.startswith("data: ")
        data = json.loads(data_line[len("data: ") :])
        assert data["type"] == event_line[len("event: ") :]
        events.append((data["type"], data))
    return events


def claude_body(content: Any, stream: bool = True) -> dict[str, Any]:
    return {"model": "m", "stream": stream, "messages": [{"role": "user", "content": content}]}


def codex_body(*items: dict[str, Any]) -> dict[str, Any]:
    return {"model": "m", "stream": True, "input": list(items), "tools": [{"name": "exec_command"}]}


def test_anthropic_stream_follows_the_messages_event_order(server: ModelServer) -> None:
    status, headers, raw = post(server, "/v1/messages?beta=true", claude_body("hi there"))
    assert status == 200 and headers["Content-Type"] == "text/event-stream"
    kinds = [kind for kind, _ in sse_events(raw)]
    assert kinds == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    events = dict(sse_events(raw))
    assert events["content_block_delta"]["delta"]["text"] == "scripted reply to: hi there"
    assert events["message_start"]["message"]["usage"]["input_tokens"] == 120
    assert events["message_delta"]["delta"]["stop_reason"] == "end_turn"


def test_use_bash_becomes_a_bash_tool_use_with_the_command(server: ModelServer) -> None:
    content = [
        {"type": "text", "text": "<system-reminder>USE_BASH: not this</system-reminder>"},
        {"type": "text", "text": "please USE_BASH: echo hello\nand thanks"},
    ]
    _, _, raw = post(server, "/v1/messages", claude_body(content))
    events = sse_events(raw)
    [tool_start] = [d for k, d in events if k == "content_block_start" and d["index"] == 1]
    assert tool_start["content_block"]["name"] == "Bash"
    [tool_delta] = [d for k, d in events if k == "content_block_delta" and d["index"] == 1]
    assert json.loads(tool_delta["delta"]["partial_json"]) == {"command": "echo hello"}
    assert dict(events)["message_delta"]["delta"]["stop_reason"] == "tool_use"


def test_tool_result_is_quoted_and_non_stream_gets_json(server: ModelServer) -> None:
    content = [{"type": "tool_result", "tool_use_id": "t1", "content": "hello\n"}]
    status, _, raw = post(server, "/v1/messages", claude_body(content, stream=False))
    message = json.loads(raw)
    assert status == 200 and message["type"] == "message"
    assert message["content"] == [{"type": "text", "text": "tool result: hello"}]


def test_use_shell_becomes_an_exec_command_function_call(server: ModelServer) -> None:
    prompt = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "USE_SHELL: ls -l"}],
    }
    _, _, raw = post(server, "/v1/responses", codex_body(prompt))
    events = sse_events(raw)
    assert [k for k, _ in events][:2] == ["response.created", "response.in_progress"]
    assert events[-1][0] == "response.completed"
    assert [d["sequence_number"] for _, d in events] == list(range(len(events)))
    done = [d["item"] for k, d in events if k == "response.output_item.done"]
    call = next(item for item in done if item["type"] == "function_call")
    assert call["name"] == "exec_command" and json.loads(call["arguments"]) == {"cmd": "ls -l"}
    assert events[-1][1]["response"]["usage"]["total_tokens"] == 132


def test_function_call_output_is_quoted(server: ModelServer) -> None:
    output = {"type": "function_call_output", "call_id": "c1", "output": "Output:\nhello\n"}
    _, _, raw = post(server, "/v1/responses", codex_body(output))
    [text] = [d["delta"] for k, d in sse_events(raw) if k == "response.output_text.delta"]
    assert text == "tool result: Output:\nhello"


def test_scripted_replies_come_first_in_order_per_api(server: ModelServer) -> None:
    server.script(
        TextReply("for codex", usage=Usage(input_tokens=5, output_tokens=1)), api="openai"
    )
    server.script(TextReply("any 1"), ToolCallReply("touch x"))
    texts = []
    for _ in range(2):
        _, _, raw = post(server, "/v1/messages", claude_body("hi", stream=False))
        texts.append(json.loads(raw)["content"])
    assert texts[0] == [{"type": "text", "text": "any 1"}]
    assert texts[1][0]["type"] == "tool_use" and texts[1][0]["input"] == {"command": "touch x"}
    _, _, raw = post(server, "/v1/responses", codex_body())
    completed = sse_events(raw)[-1][1]["response"]
    assert completed["output"][0]["content"][0]["text"] == "for codex"
    assert completed["usage"]["input_tokens"] == 5
    assert server.pending_replies() == 0
    _, _, raw = post(server, "/v1/messages", claude_body("back to rules", stream=False))
    assert json.loads(raw)["content"][0]["text"] == "scripted reply to: back to rules"


def test_error_reply_uses_the_api_error_shape(server: ModelServer) -> None:
    server.script(ErrorReply(529, "overloaded"))
    status, _, raw = post(server, "/v1/messages", claude_body("hi"))
    assert status == 529
    assert json.loads(raw) == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "overloaded"},
    }


def test_requests_are_recorded_with_headers_and_parsed_bodies(server: ModelServer) -> None:
    body = claude_body("hi", stream=False)
    body["system"] = [{"type": "text", "text": "base"}, {"type": "text", "text": "work state"}]
    post(
        server,
        "/v1/messages?beta=true",
        gzip.compress(json.dumps(body).encode()),
        {"Content-Encoding": "gzip", "X-Api-Key": "k"},
    )
    urllib.request.urlopen(
        urllib.request.Request(server.url + "/api/hello", method="HEAD"), timeout=5
    )
    first, second = server.requests
    assert first.api == "anthropic" and first.query == {"beta": "true"}
    assert first.headers["x-api-key"] == "k"
    assert first.system_text == "base\nwork state"
    assert first.message_texts("user") == ["hi"]
    assert (second.method, second.path, second.api) == ("HEAD", "/api/hello", None)
    assert server.model_requests() == [first]


def test_sleep_delays_the_reply_and_waiting_sees_the_request(server: ModelServer) -> None:
    started = time.monotonic()
    worker = threading.Thread(
        target=post, args=(server, "/v1/messages", claude_body("SLEEP:0.5 hi"))
    )
    worker.start()
    server.wait_for_model_requests(1, timeout=5)
    worker.join(timeout=10)
    assert time.monotonic() - started >= 0.5
    with pytest.raises(TimeoutError):
        server.wait_for_model_requests(2, timeout=0.1)


def test_bounds_and_unknown_paths(server: ModelServer) -> None:
    with pytest.raises(ValueError):
        server.script(*[TextReply("x")] * (MAX_SCRIPTED_REPLIES + 1))
    status, _, _ = post(server, "/v1/nothing-here", {})
    assert status == 404
    status, _, raw = post(server, "/v1/messages", b"not json")
    assert status == 400 and json.loads(raw)["type"] == "error"
