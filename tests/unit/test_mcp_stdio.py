"""The hand-written MCP stdio server (alpctl/mcp_stdio.py): the handshake, the tool schema
taken from a signature, and arguments checked before a tool runs."""

from __future__ import annotations

import io
import json
from typing import Annotated, Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alpctl import mcp_stdio
from alpctl.mcp_stdio import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    PROTOCOL_VERSIONS,
    Arg,
    StdioServer,
    ToolError,
    argument_errors,
    input_schema,
)

Colour = Literal["red", "green"]


class Recorder:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def paint(self, colour: Colour, text: str, times: int = 1, loud: bool = False) -> str:
        self.calls.append({"colour": colour, "text": text, "times": times, "loud": loud})
        return f"{colour}:{text * times}"

    def refuse(self) -> str:
        raise ToolError("NOPE: not here")


def server() -> tuple[StdioServer, Recorder]:
    recorder = Recorder()
    built = StdioServer("alp", "1.0", instructions="use the tools")
    built.add_tool(recorder.paint, name="paint", description="paints")
    built.add_tool(recorder.refuse, name="refuse", description="refuses")
    return built, recorder


def request(method: str, params: Any = None, id_: Any = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return message


def call(built: StdioServer, arguments: Any, name: str = "paint") -> dict[str, Any]:
    reply = built.handle(request("tools/call", {"name": name, "arguments": arguments}))
    assert reply is not None
    return dict(reply["result"])


def test_the_schema_comes_from_the_signature() -> None:
    _, recorder = server()
    assert input_schema(recorder.paint) == {
        "type": "object",
        "properties": {
            "colour": {"type": "string", "enum": ["red", "green"]},
            "text": {"type": "string"},
            "times": {"type": "integer", "default": 1},
            "loud": {"type": "boolean", "default": False},
        },
        "required": ["colour", "text"],
        "additionalProperties": False,
    }


def test_a_parameter_without_a_json_type_is_refused_when_the_tool_is_added() -> None:
    def bad(items: set[str]) -> str:
        return ""

    with pytest.raises(TypeError, match="no JSON Schema type"):
        StdioServer("x", "1").add_tool(bad, name="bad", description="")


@given(st.text(max_size=12) | st.sampled_from(PROTOCOL_VERSIONS))
def test_initialize_echoes_a_known_revision_and_offers_the_newest_otherwise(asked: str) -> None:
    built, _ = server()
    reply = built.handle(request("initialize", {"protocolVersion": asked, "capabilities": {}}))
    assert reply is not None and reply["id"] == 1
    result = reply["result"]
    expected = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1]
    assert result["protocolVersion"] == expected
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["serverInfo"] == {"name": "alp", "version": "1.0"}
    assert result["instructions"] == "use the tools"


def test_notifications_and_stray_responses_get_no_reply() -> None:
    built, _ = server()
    assert built.handle({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None
    assert built.handle({"jsonrpc": "2.0", "id": 7, "result": {}}) is None


def test_ping_list_and_unknown_methods() -> None:
    built, _ = server()
    assert built.handle(request("ping")) == {"jsonrpc": "2.0", "id": 1, "result": {}}
    listed = built.handle(request("tools/list", {"cursor": "ignored"}))
    assert listed is not None
    assert [t["name"] for t in listed["result"]["tools"]] == ["paint", "refuse"]
    assert listed["result"]["tools"][0]["inputSchema"]["required"] == ["colour", "text"]
    missing = built.handle(request("resources/list", id_="a"))
    assert missing is not None and missing["id"] == "a"
    assert missing["error"]["code"] == METHOD_NOT_FOUND
    unknown = built.handle(request("tools/call", {"name": "fly", "arguments": {}}))
    assert unknown is not None and unknown["error"]["code"] == INVALID_PARAMS


def test_a_tool_error_is_a_result_marked_as_an_error() -> None:
    built, _ = server()
    assert call(built, {}, name="refuse") == {
        "content": [{"type": "text", "text": "NOPE: not here"}],
        "isError": True,
    }


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=4,
)
arguments = st.dictionaries(
    st.sampled_from(["colour", "text", "times", "loud", "other"]),
    st.sampled_from(["red", "green", "blue"]) | json_values,
)


@given(arguments)
def test_a_tool_runs_exactly_when_its_arguments_fit_and_is_told_what_does_not(
    given_arguments: dict[str, Any],
) -> None:
    built, recorder = server()
    result = call(built, given_arguments)
    fits = (
        given_arguments.get("colour") in ("red", "green")
        and isinstance(given_arguments.get("text"), str)
        and type(given_arguments.get("times", 1)) is int
        and type(given_arguments.get("loud", False)) is bool
        and "other" not in given_arguments
    )
    assert result["isError"] is not fits
    assert len(recorder.calls) == (1 if fits else 0)
    if fits:
        assert recorder.calls[0] == {"times": 1, "loud": False, **given_arguments}
    else:
        text = result["content"][0]["text"]
        assert text.startswith("invalid arguments for paint: ")
        for name in set(given_arguments) - {"colour", "text", "times", "loud"}:
            assert f"unknown argument `{name}`" in text


def test_run_answers_each_line_and_a_line_that_is_not_json() -> None:
    built, _ = server()
    lines = [
        request("initialize", {"protocolVersion": "2025-06-18"}),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        request("tools/call", {"name": "paint", "arguments": {"colour": "red", "text": "é\n"}}, 2),
    ]
    stdin = io.BytesIO(b"".join(json.dumps(m).encode() + b"\n" for m in lines) + b"{oops\n\n")
    stdout = io.BytesIO()
    built.run(stdin, stdout)
    replies = [json.loads(line) for line in stdout.getvalue().splitlines()]
    assert [r.get("id") for r in replies] == [1, 2, None]
    assert replies[0]["result"]["protocolVersion"] == "2025-06-18"
    assert replies[1]["result"]["content"][0]["text"] == "red:é\n"
    assert replies[2]["error"]["code"] == PARSE_ERROR


def test_an_optional_list_is_an_array_or_null_and_its_items_are_checked() -> None:
    seen: list[list[str] | None] = []

    def tag(names: list[str] | None = None) -> str:
        seen.append(names)
        return "ok"

    built = StdioServer("alp", "1.0")
    built.add_tool(tag, name="tag", description="tags")
    assert input_schema(tag)["properties"]["names"] == {
        "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
        "default": None,
    }
    assert not call(built, {"names": ["a", "b"]}, name="tag")["isError"]
    assert not call(built, {"names": None}, name="tag")["isError"]
    assert not call(built, {}, name="tag")["isError"]
    refused = call(built, {"names": ["a", 1]}, name="tag")
    assert refused["isError"]
    assert "must be an array of string or null" in refused["content"][0]["text"]
    assert seen == [["a", "b"], None, None]


def strict_json(line: bytes) -> Any:
    """A line as a strict JSON reader reads it: UTF-8, no NaN or Infinity."""

    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} is not JSON")

    return json.loads(line.decode("utf-8"), parse_constant=refuse)


def serve_lines(built: StdioServer, raw_lines: list[bytes]) -> list[Any]:
    stdout = io.BytesIO()
    built.run(io.BytesIO(b"".join(line + b"\n" for line in raw_lines)), stdout)
    return [strict_json(line) for line in stdout.getvalue().splitlines()]


PING = b'{"jsonrpc":"2.0","id":99,"method":"ping"}'


@pytest.mark.parametrize(
    ("raw", "code", "reply_id"),
    [
        # a tool name that is not a string (MCP Inspector CLI: --tool-name as a list)
        (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":["pin"]}}',
         INVALID_PARAMS, 1),
        (b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":{"a":1}}}',
         INVALID_PARAMS, 2),
        # ids no reply can echo as valid JSON: a lone surrogate, a number beyond a double
        (b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}', INVALID_REQUEST, None),
        (b'{"jsonrpc":"2.0","id":1e400,"method":"ping"}', INVALID_REQUEST, None),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', INVALID_REQUEST, None),
        (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', INVALID_REQUEST, None),
        (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', INVALID_REQUEST, None),
        (b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}', PARSE_ERROR, None),
        # nesting: past what json can read at all, and past MAX_DEPTH
        (b'{"jsonrpc":"2.0","id":3,"method":"ping","params":' + b"[" * 100_000 + b"]" * 100_000
         + b"}", PARSE_ERROR, None),
        (b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"paint","arguments":'
         b'{"text":' + b"[" * 500 + b"]" * 500 + b"}}}", PARSE_ERROR, None),
        (b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":[]}', INVALID_PARAMS, 5),
        (b"\xff\xfe not utf-8", PARSE_ERROR, None),
    ],
)  # fmt: skip
def test_a_hostile_message_gets_an_error_and_the_server_keeps_serving(
    raw: bytes, code: int, reply_id: Any
) -> None:
    built, recorder = server()
    first, after = serve_lines(built, [raw, PING])
    assert first["error"]["code"] == code and first["id"] == reply_id, first
    assert after == {"jsonrpc": "2.0", "id": 99, "result": {}}
    assert recorder.calls == []


def test_a_lone_surrogate_in_an_argument_is_refused_and_never_written() -> None:
    built, recorder = server()
    raw = (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call",'
        b'"params":{"name":"paint","arguments":{"colour":"red","text":"\\udc80"}}}'
    )
    (reply, after) = serve_lines(built, [raw, PING])
    assert reply["result"]["isError"] and "valid Unicode" in reply["result"]["content"][0]["text"]
    assert after["result"] == {} and recorder.calls == []


def test_a_bug_in_the_server_is_an_internal_error_not_an_exit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built, _ = server()

    def broken(params: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(built, "_initialize", broken)
    first, after = serve_lines(built, [json.dumps(request("initialize", {})).encode(), PING])
    assert first["error"]["code"] == INTERNAL_ERROR and first["id"] == 1
    assert "boom" in first["error"]["message"] and after["id"] == 99


def test_a_line_over_the_cap_is_skipped_and_answered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mcp_stdio, "MAX_LINE_BYTES", 64)
    built, _ = server()
    first, after = serve_lines(built, [b'{"id":1,"pad":"' + b"x" * 500 + b'"}', PING])
    assert first["error"]["code"] == PARSE_ERROR and "at most 64 bytes" in first["error"]["message"]
    assert after["id"] == 99


class Bounded:
    def say(
        self,
        text: Annotated[str, Arg("what to say", max_length=8, max_bytes=8, one_line=True)],
        times: Annotated[int, Arg("how often", minimum=1, maximum=3)] = 1,
        tags: Annotated[list[str] | None, Arg("labels", max_items=2)] = None,
    ) -> str:
        return text * times


def test_arg_bounds_are_in_the_schema_and_checked_before_the_tool_runs() -> None:
    schema = input_schema(Bounded().say)
    assert schema["additionalProperties"] is False
    text = schema["properties"]["text"]
    assert text["description"] == "what to say"
    assert (text["maxLength"], text["x-maxBytes"]) == (8, 8) and "pattern" in text
    assert schema["properties"]["times"] | {} == {
        "description": "how often", "type": "integer", "minimum": 1, "maximum": 3, "default": 1,
    }  # fmt: skip
    assert schema["properties"]["tags"]["anyOf"][0]["maxItems"] == 2
    built = StdioServer("x", "1")
    built.add_tool(
        Bounded().say, name="say", description="says", annotations={"readOnlyHint": True}
    )
    listed = built.handle(request("tools/list"))
    assert listed is not None
    assert listed["result"]["tools"][0]["annotations"] == {"readOnlyHint": True}
    assert not call(built, {"text": "hé", "times": 3}, name="say")["isError"]
    for refused, needle in [
        ({"text": "a\nb"}, "one line"),
        ({"text": "line\u2028two"}, "one line"),
        ({"text": "ab\n"}, "one line"),
        ({"text": "ééééé"}, "at most 8 bytes"),  # 5 characters, 10 bytes
        ({"text": "a", "times": 0}, "an integer from 1 to 3"),
        ({"text": "a", "times": 4}, "an integer from 1 to 3"),
        ({"text": "a", "tags": ["x", "y", "z"]}, "at most 2"),
        ({"text": "a", "loud": True}, "unknown argument `loud`"),
    ]:
        result = call(built, refused, name="say")
        assert result["isError"], refused
        assert needle in result["content"][0]["text"], (refused, result)


def test_a_huge_refused_value_is_quoted_short() -> None:
    built, _ = server()
    result = call(built, {"colour": "x" * 100_000, "text": "t"})
    assert result["isError"] and len(result["content"][0]["text"]) < 400


def test_an_object_parameter_is_a_json_object() -> None:
    def takes(payload: dict[str, object] | None = None) -> str:
        return "ok"

    schema = input_schema(takes)
    assert schema["properties"]["payload"]["anyOf"][0] == {"type": "object"}
    assert argument_errors(schema, {"payload": {"a": 1}}) == []
    assert argument_errors(schema, {"payload": [1]})
