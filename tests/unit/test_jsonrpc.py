"""protocol.jsonrpc: parse_frame by the JSON-RPC 2.0 specification's own examples and edges."""

from __future__ import annotations

import json
from typing import Any

import pytest

from protocol import errors, jsonrpc
from protocol.jsonrpc import Call, ErrorReply, parse_frame


def parse_one(document: Any) -> jsonrpc.Parsed:
    items, is_batch = parse_frame(json.dumps(document).encode())
    assert not is_batch and len(items) == 1
    return items[0]


def error_code(item: jsonrpc.Parsed) -> int:
    assert isinstance(item, ErrorReply), item
    return item.code


# Parse errors


@pytest.mark.parametrize(
    "frame",
    [
        b"",
        b"garbage",
        b'{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]',
        b'{"jsonrpc":"2.0","id":1',
        b"\xff\xfe",
        b'{"a":1}{"b":2}',
        b'[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},{"jsonrpc": "2.0"',
    ],
)
def test_unparsable_json_is_one_parse_error_with_null_id(frame: bytes) -> None:
    items, is_batch = parse_frame(frame)
    assert not is_batch
    assert items == [ErrorReply(None, errors.PARSE_ERROR, items[0].message)]  # type: ignore[union-attr]
    assert items[0].message.startswith("Parse error")  # type: ignore[union-attr]


def test_empty_batch_is_one_invalid_request_and_not_a_batch() -> None:
    items, is_batch = parse_frame(b"[]")
    assert not is_batch
    assert [error_code(i) for i in items] == [errors.INVALID_REQUEST]
    assert items[0].id is None


def test_batch_of_non_objects_gives_one_invalid_request_each() -> None:
    items, is_batch = parse_frame(b"[1,2,3]")
    assert is_batch
    assert [error_code(i) for i in items] == [errors.INVALID_REQUEST] * 3


def test_batch_of_one_non_object() -> None:
    items, is_batch = parse_frame(b"[1]")
    assert is_batch and [error_code(i) for i in items] == [errors.INVALID_REQUEST]


def test_mixed_batch_keeps_order_and_kinds() -> None:
    batch = [
        {"jsonrpc": "2.0", "method": "sum", "params": [1, 2, 4], "id": "1"},
        {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
        {"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": "2"},
        {"foo": "boo"},
        {"jsonrpc": "2.0", "method": "get_data", "id": "9"},
    ]
    items, is_batch = parse_frame(json.dumps(batch).encode())
    assert is_batch and len(items) == 5
    assert items[0] == Call("sum", [1, 2, 4], "1", False)
    assert items[1] == Call("notify_hello", [7], None, True)
    assert items[2] == Call("subtract", [42, 23], "2", False)
    assert error_code(items[3]) == errors.INVALID_REQUEST
    assert items[4] == Call("get_data", None, "9", False)


def test_batch_at_the_cap_is_parsed_and_one_more_is_refused_by_name() -> None:
    call = {"jsonrpc": "2.0", "method": "m", "id": 1}
    items, is_batch = parse_frame(json.dumps([call] * jsonrpc.MAX_BATCH).encode())
    assert is_batch and len(items) == jsonrpc.MAX_BATCH
    items, is_batch = parse_frame(json.dumps([call] * (jsonrpc.MAX_BATCH + 1)).encode())
    assert not is_batch and len(items) == 1
    refused = items[0]
    assert isinstance(refused, ErrorReply)
    assert refused.code == errors.code_of("BATCH_TOO_LARGE")
    assert refused.data == {"name": "BATCH_TOO_LARGE", "limit": jsonrpc.MAX_BATCH}


# Single messages


def test_request_with_named_params() -> None:
    item = parse_one({"jsonrpc": "2.0", "id": 3, "method": "thread/list", "params": {"all": 1}})
    assert item == Call("thread/list", {"all": 1}, 3, False)


def test_request_with_positional_params() -> None:
    item = parse_one({"jsonrpc": "2.0", "id": 3, "method": "m", "params": [1, "two"]})
    assert item == Call("m", [1, "two"], 3, False)


def test_request_without_params() -> None:
    assert parse_one({"jsonrpc": "2.0", "id": "x", "method": "m"}) == Call("m", None, "x", False)


def test_notification_has_no_id_member() -> None:
    item = parse_one({"jsonrpc": "2.0", "method": "m"})
    assert isinstance(item, Call) and item.is_notification and item.id is None


def test_null_id_is_a_request_not_a_notification() -> None:
    item = parse_one({"jsonrpc": "2.0", "method": "m", "id": None})
    assert isinstance(item, Call) and not item.is_notification and item.id is None


@pytest.mark.parametrize("id", ["", "abc", "ключ", 0, -7, 2**63, 2**53 + 1])
def test_string_and_integer_ids_are_kept_exactly(id: Any) -> None:
    item = parse_one({"jsonrpc": "2.0", "method": "m", "id": id})
    assert isinstance(item, Call) and item.id == id and type(item.id) is type(id)


@pytest.mark.parametrize("id", [True, False, 1.5, 1.0, [], {}, [1]])
def test_other_id_types_are_invalid_requests_answered_with_null(id: Any) -> None:
    item = parse_one({"jsonrpc": "2.0", "method": "m", "id": id})
    assert isinstance(item, ErrorReply)
    assert item.code == errors.INVALID_REQUEST and item.id is None


@pytest.mark.parametrize("version", [None, "1.0", 2.0, 2, "2", "2.0 "])
def test_jsonrpc_member_must_be_exactly_2_0(version: Any) -> None:
    message: dict[str, Any] = {"id": 4, "method": "m"}
    if version is not None:
        message["jsonrpc"] = version
    item = parse_one(message)
    assert error_code(item) == errors.INVALID_REQUEST
    assert item.id == 4  # the id is known, so the error echoes it


@pytest.mark.parametrize("method", [None, 1, ["m"], {"m": 1}, True])
def test_method_must_be_a_string(method: Any) -> None:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 5}
    if method is not None:
        message["method"] = method
    item = parse_one(message)
    assert error_code(item) == errors.INVALID_REQUEST and item.id == 5


@pytest.mark.parametrize("params", [None, 1, "x", True])
def test_params_must_be_an_object_or_an_array_when_present(params: Any) -> None:
    item = parse_one({"jsonrpc": "2.0", "id": 6, "method": "m", "params": params})
    assert error_code(item) == errors.INVALID_REQUEST and item.id == 6


@pytest.mark.parametrize("document", [1, "s", None, True, 1.5])
def test_scalar_document_is_an_invalid_request(document: Any) -> None:
    assert error_code(parse_one(document)) == errors.INVALID_REQUEST


def test_unknown_members_are_ignored() -> None:
    item = parse_one({"jsonrpc": "2.0", "id": 1, "method": "m", "extra": {"x": 1}})
    assert item == Call("m", None, 1, False)


def test_invalid_notification_still_gets_an_error_with_null_id() -> None:
    # Without a valid method it is not a notification; the spec answers it with id null.
    item = parse_one({"jsonrpc": "2.0", "method": 1})
    assert isinstance(item, ErrorReply) and item.id is None


@pytest.mark.parametrize("opener", [b"[", b'{"a":'])
@pytest.mark.parametrize("depth", [64, 2000])
def test_deeply_nested_documents_never_raise(opener: bytes, depth: int) -> None:
    items, _ = parse_frame(opener * depth)
    assert all(isinstance(i, ErrorReply) for i in items)


# Encoding


def test_encode_result() -> None:
    assert json.loads(jsonrpc.encode_result(7, {"a": [1]})) == {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {"a": [1]},
    }


def test_encode_result_keeps_a_null_result() -> None:
    assert json.loads(jsonrpc.encode_result("x", None)) == {
        "jsonrpc": "2.0",
        "id": "x",
        "result": None,
    }


def test_encode_error_omits_absent_data_and_keeps_present_data() -> None:
    bare = json.loads(jsonrpc.encode_error(None, -32700, "Parse error"))
    assert bare == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error"},
    }
    rich = json.loads(
        jsonrpc.encode_error(1, 1003, "conflict", {"name": "X", "currentRevision": 2})
    )
    assert rich["error"]["data"] == {"name": "X", "currentRevision": 2}


def test_encode_notification_has_no_id() -> None:
    note = json.loads(jsonrpc.encode_notification("thread/changed", {"change": "created"}))
    assert note == {"jsonrpc": "2.0", "method": "thread/changed", "params": {"change": "created"}}


def test_encoded_messages_are_single_lines() -> None:
    for payload in (
        jsonrpc.encode_result(1, {"text": "line one\nline two\r\n"}),
        jsonrpc.encode_error(1, 1, "a\nb", {"x": "\n"}),
        jsonrpc.encode_notification("m", ["\n"]),
    ):
        assert b"\n" not in payload and b"\r" not in payload


def test_encode_batch_joins_without_re_encoding() -> None:
    parts = [jsonrpc.encode_result(1, 1), jsonrpc.encode_result(2, 2)]
    joined = jsonrpc.encode_batch(parts)
    assert [r["id"] for r in json.loads(joined)] == [1, 2]
    assert joined == b"[" + parts[0] + b"," + parts[1] + b"]"


def test_domain_codes_stay_outside_the_reserved_range() -> None:
    for name, (code, _) in errors.DOMAIN_ERRORS.items():
        assert not -32768 <= code <= -32000, name
        assert errors.CODE_TO_NAME[code] == name
    assert len(errors.CODE_TO_NAME) == len(errors.DOMAIN_ERRORS)
