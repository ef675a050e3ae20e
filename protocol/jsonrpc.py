"""JSON-RPC 2.0 message handling, pure: a decoded frame in, parsed calls or error replies out.

Daemon side (uses msgspec). The rules are the specification's: a notification (no `id`)
never gets a reply, not even an error, also inside a batch; an empty batch is one -32600;
a batch of notifications only gets no reply at all; unparsable JSON is one -32700 with
`id: null`. Batches are capped (`MAX_BATCH`) with a named error.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from protocol import errors

MAX_BATCH: Final = 256

Id = int | str | None

_decoder: Final = msgspec.json.Decoder()
_encoder: Final = msgspec.json.Encoder()


class Call(msgspec.Struct, frozen=True):
    """One well-formed request or notification."""

    method: str
    params: Any
    id: Id
    is_notification: bool


class ErrorReply(msgspec.Struct, frozen=True):
    """A reply to send as is (the message was broken before it could be dispatched)."""

    id: Id
    code: int
    message: str
    data: Any = None


Parsed = Call | ErrorReply


def parse_frame(frame: bytes) -> tuple[list[Parsed], bool]:
    """Split one frame into calls and immediate error replies.

    Returns (items, is_batch). Raises nothing: every failure becomes an ErrorReply.
    """
    try:
        document = _decoder.decode(frame)
    except msgspec.DecodeError as exc:
        return [ErrorReply(None, errors.PARSE_ERROR, f"Parse error: {exc}")], False
    except RecursionError:
        # msgspec gives up on nesting deeper than ~1000 levels; no valid request is that deep.
        return [ErrorReply(None, errors.PARSE_ERROR, "Parse error: nesting too deep")], False
    if isinstance(document, list):
        if not document:
            return [ErrorReply(None, errors.INVALID_REQUEST, "Invalid Request: empty batch")], False
        if len(document) > MAX_BATCH:
            code = errors.code_of("BATCH_TOO_LARGE")
            message = f"batch of {len(document)} requests exceeds the limit of {MAX_BATCH}"
            data = {"name": "BATCH_TOO_LARGE", "limit": MAX_BATCH}
            return [ErrorReply(None, code, message, data)], False
        return [_parse_message(item) for item in document], True
    return [_parse_message(document)], False


def _parse_message(message: Any) -> Parsed:
    if not isinstance(message, dict):
        return ErrorReply(None, errors.INVALID_REQUEST, "Invalid Request: not an object")
    raw_id = message.get("id")
    has_id = "id" in message
    valid_id = (
        raw_id is None
        or isinstance(raw_id, str)
        or (isinstance(raw_id, int) and not isinstance(raw_id, bool))
    )
    reply_id: Id = raw_id if has_id and valid_id else None
    if message.get("jsonrpc") != "2.0":
        return ErrorReply(
            reply_id, errors.INVALID_REQUEST, 'Invalid Request: jsonrpc must be "2.0"'
        )
    if not valid_id:
        return ErrorReply(
            None, errors.INVALID_REQUEST, "Invalid Request: id must be a string, integer or null"
        )
    method = message.get("method")
    if not isinstance(method, str):
        return ErrorReply(
            reply_id, errors.INVALID_REQUEST, "Invalid Request: method must be a string"
        )
    params = message.get("params")
    if "params" in message and not isinstance(params, dict | list):
        return ErrorReply(
            reply_id, errors.INVALID_REQUEST, "Invalid Request: params must be an object or array"
        )
    return Call(method, params, reply_id, not has_id)


def encode_result(id: Id, result: Any) -> bytes:
    return _encoder.encode({"jsonrpc": "2.0", "id": id, "result": result})


def encode_error(id: Id, code: int, message: str, data: Any = None) -> bytes:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return _encoder.encode({"jsonrpc": "2.0", "id": id, "error": error})


def encode_notification(method: str, params: Any) -> bytes:
    return _encoder.encode({"jsonrpc": "2.0", "method": method, "params": params})


def encode_batch(replies: list[bytes]) -> bytes:
    """Join already-encoded replies into one batch reply without re-encoding them."""
    return b"[" + b",".join(replies) + b"]"
