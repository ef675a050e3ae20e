"""A small MCP server over stdio: tools only, stdlib only.

What it speaks (the Model Context Protocol's stdio transport, protocol revisions 2024-11-05
to 2025-11-25): one JSON-RPC 2.0 message per line on stdin and stdout; `initialize` (the
client's revision is echoed when known, else the newest here is offered), `ping`,
`tools/list` and `tools/call`. Notifications (`notifications/initialized`,
`notifications/cancelled`, …) need no answer and get none; any other method is
METHOD_NOT_FOUND. A tool is a function returning text; its input schema comes from its
signature (str, int, float, bool, Literal[...] of strings, list[...] of those, X | None; a
parameter with a default is optional), each parameter described and bounded by an `Arg` in
`Annotated[...]` (a description, maxLength, a byte cap, minimum/maximum, a one-line
pattern); the schema refuses arguments it does not name (`additionalProperties: false`).
Arguments that do not fit the schema, and a `ToolError` the function raises, come back as
the tool's result marked `isError`, so the model can read and correct them.

Whatever arrives, the server answers and goes on serving: a line that is not JSON (or holds
NaN/Infinity, or nests deeper than `MAX_DEPTH`) is -32700 with id null; an id that is not a
string or an integer (null, 1e400, a lone surrogate) is -32600 with id null, so no reply
ever echoes a value that is not valid JSON; a failure inside the server is -32603. What it
writes is always valid UTF-8 JSON, without NaN or Infinity.

Why not the official SDK, which `alp mcp` used before: the SDK's package imports its client,
its HTTP transports and the pydantic models of two protocol revisions whatever part of it is
used, which made `alp mcp` answer `initialize` seconds after it started (bench/bench_mcp.py
measures both). Claude Code blocks its prompt and Codex its first request on that answer.
The SDK stays the reference: tests/integration/test_mcp_server.py drives this server with
the SDK's client, which validates every message against the SDK's types.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from types import NoneType, UnionType
from typing import (
    IO,
    Annotated,
    Any,
    Literal,
    NamedTuple,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

#: the handshake revisions this server speaks, oldest to newest
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

#: the deepest nesting of arrays and objects a message may have (MCP's are a few levels deep)
MAX_DEPTH = 64
#: the longest line read (a longer one is skipped up to its newline and answered -32700)
MAX_LINE_BYTES = 4 * 1024 * 1024
#: what a tool result or an error message quotes of a refused value, at most
_QUOTE_CHARS = 120

_JSON_TYPES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


class ToolError(Exception):
    """A failure the model should read as the tool's result (`isError`), not a crash."""


class Arg(NamedTuple):
    """What a parameter's schema says besides its type: `Annotated[str, Arg("…", …)]`."""

    description: str
    #: characters (JSON Schema's maxLength counts code points)
    max_length: int | None = None
    #: UTF-8 bytes, the unit the daemon's caps are in (`x-maxBytes`, checked here too)
    max_bytes: int | None = None
    minimum: int | None = None
    maximum: int | None = None
    #: one line: no line break of any kind
    one_line: bool = False
    max_items: int | None = None


#: a line break of any kind (what str.splitlines splits on, and JSON Schema's regex can say)
ONE_LINE_PATTERN = "^[^\\n\\r\\u000b\\u000c\\u001c-\\u001e\\u0085\\u2028\\u2029]*$"
_ONE_LINE = re.compile(ONE_LINE_PATTERN)


class Tool(NamedTuple):
    name: str
    description: str
    function: Callable[..., str]
    input_schema: dict[str, Any]
    annotations: dict[str, Any] | None = None

    def listing(self) -> dict[str, Any]:
        listed = {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
        }
        if self.annotations:
            listed["annotations"] = self.annotations
        return listed


def _constrained(prop: dict[str, Any], arg: Arg) -> dict[str, Any]:
    prop = {"description": arg.description, **prop}
    target = prop["anyOf"][0] if "anyOf" in prop else prop
    bounds = {
        "maxLength": arg.max_length,
        "x-maxBytes": arg.max_bytes,
        "minimum": arg.minimum,
        "maximum": arg.maximum,
        "maxItems": arg.max_items,
        "pattern": ONE_LINE_PATTERN if arg.one_line else None,
    }
    target.update({key: value for key, value in bounds.items() if value is not None})
    return prop


def _property(annotation: Any) -> dict[str, Any]:
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        arg = next((meta for meta in annotation.__metadata__ if isinstance(meta, Arg)), None)
        inner = _property(args[0])
        return inner if arg is None else _constrained(inner, arg)
    if origin is Literal:
        if not all(isinstance(v, str) for v in args):
            raise TypeError(f"only string Literals are supported, not {annotation}")
        return {"type": "string", "enum": list(args)}
    if origin is list and len(args) == 1:
        return {"type": "array", "items": _property(args[0])}
    if origin in (Union, UnionType) and NoneType in args and len(args) == 2:
        (inner,) = (arg for arg in args if arg is not NoneType)
        return {"anyOf": [_property(inner), {"type": "null"}]}
    if annotation is dict or origin is dict:
        return {"type": "object"}
    if annotation not in _JSON_TYPES:
        raise TypeError(f"no JSON Schema type for {annotation!r}")
    return {"type": _JSON_TYPES[annotation]}


def input_schema(function: Callable[..., str]) -> dict[str, Any]:
    """The JSON Schema of a function's (or bound method's) positional-or-keyword parameters.

    Read from the code object rather than with `inspect`, whose imports (ast, dis, …) cost
    more than the rest of `alp mcp`'s start."""
    plain = getattr(function, "__func__", function)
    code = plain.__code__
    if code.co_kwonlyargcount or code.co_flags & 0x0C:  # keyword-only, *args or **kwargs
        raise TypeError(f"{plain.__name__}: only plain parameters are supported")
    names = code.co_varnames[: code.co_argcount][1 if plain is not function else 0 :]
    defaults = plain.__defaults__ or ()
    first_optional = len(names) - len(defaults)
    hints = get_type_hints(plain, include_extras=True)
    properties: dict[str, Any] = {}
    for index, name in enumerate(names):
        prop = _property(hints[name])
        if index >= first_optional:
            prop["default"] = defaults[index - first_optional]
        properties[name] = prop
    return {
        "type": "object",
        "properties": properties,
        "required": list(names[:first_optional]),
        "additionalProperties": False,
    }


def _is_text(value: str) -> bool:
    """Valid Unicode: no lone surrogate (json reads `"\\ud800"` into one; UTF-8 has none)."""
    try:
        value.encode()
    except UnicodeEncodeError:
        return False
    return True


def _fits(value: Any, prop: dict[str, Any]) -> bool:
    if "anyOf" in prop:
        return any(_fits(value, option) for option in prop["anyOf"])
    kind = prop["type"]
    if kind == "null":
        return value is None
    if kind == "array":
        return (
            isinstance(value, list)
            and len(value) <= prop.get("maxItems", len(value))
            and all(_fits(item, prop["items"]) for item in value)
        )
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "object":
        return isinstance(value, dict)
    if kind == "integer":
        return (
            isinstance(value, int)
            and not isinstance(value, bool)
            and prop.get("minimum", value) <= value <= prop.get("maximum", value)
        )
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return (
        isinstance(value, str)
        and value in prop.get("enum", [value])
        and len(value) <= prop.get("maxLength", len(value))
        and ("pattern" not in prop or _ONE_LINE.fullmatch(value) is not None)
        and _is_text(value)
        and len(value.encode()) <= prop.get("x-maxBytes", len(value.encode()))
    )


def _expected(prop: dict[str, Any]) -> str:
    if "anyOf" in prop:
        return " or ".join(map(_expected, prop["anyOf"]))
    if "enum" in prop:
        return " | ".join(map(json.dumps, prop["enum"]))
    if prop["type"] == "array":
        most = f" (at most {prop['maxItems']})" if "maxItems" in prop else ""
        return f"an array{most} of {_expected(prop['items'])}"
    if prop["type"] == "integer" and ("minimum" in prop or "maximum" in prop):
        return f"an integer from {prop.get('minimum', '…')} to {prop.get('maximum', '…')}"
    if prop["type"] == "string" and {"pattern", "maxLength", "x-maxBytes"} & set(prop):
        rules = []
        if "pattern" in prop:
            rules.append("one line (no line break: pin or send each line on its own)")
        if "x-maxBytes" in prop:
            rules.append(f"at most {prop['x-maxBytes']} bytes of UTF-8")
        elif "maxLength" in prop:
            rules.append(f"at most {prop['maxLength']} characters")
        return "a string: " + ", ".join(rules)
    return str(prop["type"])


def _quote(value: Any) -> str:
    """A refused value, short and always printable (never the whole of a huge argument)."""
    try:
        text = json.dumps(value)
    except (ValueError, RecursionError):
        text = f"a {type(value).__name__}"
    return text if len(text) <= _QUOTE_CHARS else f"{text[:_QUOTE_CHARS]}… ({len(text)} chars)"


def argument_errors(schema: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    """What is wrong with `arguments` for `schema`, one line a fault (none: they fit)."""
    properties = schema["properties"]
    faults = [f"missing argument `{name}`" for name in schema["required"] if name not in arguments]
    for name, value in arguments.items():
        prop = properties.get(name)
        if prop is None:
            faults.append(f"unknown argument `{name}` (known: {', '.join(properties)})")
        elif isinstance(value, str) and not _is_text(value):
            faults.append(f"argument `{name}` is not valid Unicode (it holds a lone surrogate)")
        elif not _fits(value, prop):
            faults.append(f"argument `{name}` must be {_expected(prop)}, not {_quote(value)}")
    return faults


def _error(id_: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": message}}


def _valid_id(id_: Any) -> bool:
    """MCP's rule: a string or an integer, never null; a string must be valid Unicode."""
    if isinstance(id_, str):
        return _is_text(id_)
    return isinstance(id_, int) and not isinstance(id_, bool)


def _too_deep(value: Any, depth: int = MAX_DEPTH) -> bool:
    """Whether arrays and objects nest deeper than `depth` (iterative: no recursion limit)."""
    todo = [(value, 1)]
    while todo:
        node, level = todo.pop()
        if isinstance(node, dict | list):
            if level > depth:
                return True
            children = node.values() if isinstance(node, dict) else node
            todo.extend((child, level + 1) for child in children)
    return False


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def decode_line(line: bytes) -> tuple[Any, dict[str, Any] | None]:
    """(message, None), or (None, the -32700 reply) for a line that is not a JSON message."""
    try:
        message = json.loads(line, parse_constant=_refuse_constant)
    except RecursionError:
        return None, _error(None, PARSE_ERROR, f"nested deeper than {MAX_DEPTH} levels")
    except ValueError as exc:  # UnicodeDecodeError too: the line is not UTF-8
        return None, _error(None, PARSE_ERROR, f"not JSON: {exc}")
    if _too_deep(message):
        return None, _error(None, PARSE_ERROR, f"nested deeper than {MAX_DEPTH} levels")
    return message, None


def encode_reply(reply: dict[str, Any]) -> bytes:
    """One line of valid UTF-8 JSON, whatever the reply holds (a lone surrogate a tool
    echoed becomes U+FFFD; a value JSON cannot hold turns the reply into -32603)."""
    try:
        data = json.dumps(reply, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (ValueError, TypeError, RecursionError) as exc:
        fallback = _error(None, INTERNAL_ERROR, f"the reply could not be encoded: {exc}")
        data = json.dumps(fallback, ensure_ascii=False, separators=(",", ":"))
    return data.encode("utf-8", "replace") + b"\n"


def _text_result(text: str, is_error: bool) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


class StdioServer:
    """An MCP server of tools: `handle` answers one message; `run` serves stdin/stdout."""

    def __init__(self, name: str, version: str, instructions: str = "") -> None:
        self._info = {"name": name, "version": version}
        self._instructions = instructions
        self._tools: dict[str, Tool] = {}

    def add_tool(
        self,
        function: Callable[..., str],
        *,
        name: str,
        description: str,
        annotations: dict[str, Any] | None = None,
    ) -> None:
        """`annotations` are MCP's tool hints (`readOnlyHint`, `destructiveHint`, …)."""
        tool = Tool(name, description, function, input_schema(function), annotations)
        self._tools[name] = tool

    @property
    def tools(self) -> list[Tool]:
        return list(self._tools.values())

    def handle(self, message: Any) -> dict[str, Any] | None:
        """The reply to one decoded message, or None when it needs none."""
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            if isinstance(message, dict) and "method" not in message and "id" in message:
                return None  # a response to a request this server never sends
            return _error(None, INVALID_REQUEST, "expected a JSON-RPC request object")
        if "id" not in message:
            return None  # a notification
        id_, method = message["id"], message["method"]
        if not _valid_id(id_):
            return _error(
                None,
                INVALID_REQUEST,
                f"id must be a string or an integer (MCP allows no other), not {_quote(id_)}",
            )
        try:
            return self._reply(id_, method, message.get("params"))
        except Exception as exc:  # a bug here must not end the server: the run keeps its tools
            return _error(id_, INTERNAL_ERROR, f"{method} failed: {type(exc).__name__}: {exc}")

    def _reply(self, id_: Any, method: str, params: Any) -> dict[str, Any]:
        params = {} if params is None else params
        if not isinstance(params, dict):
            return _error(id_, INVALID_PARAMS, "params must be an object")
        if method == "initialize":
            result: dict[str, Any] = self._initialize(params)
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            result = {"tools": [tool.listing() for tool in self._tools.values()]}
        elif method == "tools/call":
            name = params.get("name")
            tool = self._tools.get(name) if isinstance(name, str) else None
            if tool is None:
                return _error(
                    id_,
                    INVALID_PARAMS,
                    f"unknown tool {_quote(name)}: `name` is one of {', '.join(self._tools)}",
                )
            arguments = params.get("arguments")
            result = self._call(tool, {} if arguments is None else arguments)
        else:
            return _error(id_, METHOD_NOT_FOUND, f"method not found: {method}")
        return {"jsonrpc": "2.0", "id": id_, "result": result}

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1]
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": self._info,
        }
        if self._instructions:
            result["instructions"] = self._instructions
        return result

    def _call(self, tool: Tool, arguments: Any) -> dict[str, Any]:
        if not isinstance(arguments, dict):
            return _text_result("arguments must be an object", True)
        faults = argument_errors(tool.input_schema, arguments)
        if faults:
            return _text_result(f"invalid arguments for {tool.name}: " + "; ".join(faults), True)
        try:
            return _text_result(tool.function(**arguments), False)
        except ToolError as exc:
            return _text_result(str(exc), True)
        except Exception as exc:  # a bug in a tool must not end the server
            return _text_result(f"{tool.name} failed: {type(exc).__name__}: {exc}", True)

    def run(self, stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> None:
        """Serve until stdin closes."""
        stdin = stdin or sys.stdin.buffer
        stdout = stdout or sys.stdout.buffer
        while line := stdin.readline(MAX_LINE_BYTES + 1):
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                while (rest := stdin.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                    pass
                reply: dict[str, Any] | None = _error(
                    None, PARSE_ERROR, f"a message is at most {MAX_LINE_BYTES} bytes"
                )
            elif not line.strip():
                continue
            else:
                message, reply = decode_line(line)
                if reply is None:
                    reply = self.handle(message)
            if reply is not None:
                stdout.write(encode_reply(reply))
                stdout.flush()
