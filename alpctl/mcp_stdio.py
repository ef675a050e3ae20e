"""A small MCP server over stdio: tools only, stdlib only.

What it speaks (the Model Context Protocol's stdio transport, protocol revisions 2024-11-05
to 2025-11-25): one JSON-RPC 2.0 message per line on stdin and stdout; `initialize` (the
client's revision is echoed when known, else the newest here is offered), `ping`,
`tools/list` and `tools/call`. Notifications (`notifications/initialized`,
`notifications/cancelled`, …) need no answer and get none; any other method is
METHOD_NOT_FOUND. A tool is a function returning text; its input schema comes from its
signature (str, int, float, bool, Literal[...] of strings, list[...] of those, X | None; a
parameter with a default is optional). Arguments that do not fit the schema, and a
`ToolError` the function raises, come back as the tool's result marked `isError`, so the
model can read and correct them.

Why not the official SDK, which `alp mcp` used before: the SDK's package imports its client,
its HTTP transports and the pydantic models of two protocol revisions whatever part of it is
used, which made `alp mcp` answer `initialize` seconds after it started (bench/bench_mcp.py
measures both). Claude Code blocks its prompt and Codex its first request on that answer.
The SDK stays the reference: tests/integration/test_mcp_server.py drives this server with
the SDK's client, which validates every message against the SDK's types.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from types import NoneType, UnionType
from typing import IO, Any, Literal, NamedTuple, Union, get_args, get_origin, get_type_hints

#: the handshake revisions this server speaks, oldest to newest
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602

_JSON_TYPES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


class ToolError(Exception):
    """A failure the model should read as the tool's result (`isError`), not a crash."""


class Tool(NamedTuple):
    name: str
    description: str
    function: Callable[..., str]
    input_schema: dict[str, Any]

    def listing(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
        }


def _property(annotation: Any) -> dict[str, Any]:
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        if not all(isinstance(v, str) for v in args):
            raise TypeError(f"only string Literals are supported, not {annotation}")
        return {"type": "string", "enum": list(args)}
    if origin is list and len(args) == 1:
        return {"type": "array", "items": _property(args[0])}
    if origin in (Union, UnionType) and NoneType in args and len(args) == 2:
        (inner,) = (arg for arg in args if arg is not NoneType)
        return {"anyOf": [_property(inner), {"type": "null"}]}
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
    hints = get_type_hints(plain)
    properties: dict[str, Any] = {}
    for index, name in enumerate(names):
        prop = _property(hints[name])
        if index >= first_optional:
            prop["default"] = defaults[index - first_optional]
        properties[name] = prop
    return {"type": "object", "properties": properties, "required": list(names[:first_optional])}


def _fits(value: Any, prop: dict[str, Any]) -> bool:
    if "anyOf" in prop:
        return any(_fits(value, option) for option in prop["anyOf"])
    kind = prop["type"]
    if kind == "null":
        return value is None
    if kind == "array":
        return isinstance(value, list) and all(_fits(item, prop["items"]) for item in value)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, str) and value in prop.get("enum", [value])


def _expected(prop: dict[str, Any]) -> str:
    if "anyOf" in prop:
        return " or ".join(map(_expected, prop["anyOf"]))
    if "enum" in prop:
        return " | ".join(map(json.dumps, prop["enum"]))
    if prop["type"] == "array":
        return f"an array of {_expected(prop['items'])}"
    return str(prop["type"])


def argument_errors(schema: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    """What is wrong with `arguments` for `schema`, one line a fault (none: they fit)."""
    properties = schema["properties"]
    faults = [f"missing argument `{name}`" for name in schema["required"] if name not in arguments]
    for name, value in arguments.items():
        prop = properties.get(name)
        if prop is None:
            faults.append(f"unknown argument `{name}` (known: {', '.join(properties)})")
        elif not _fits(value, prop):
            faults.append(f"argument `{name}` must be {_expected(prop)}, not {json.dumps(value)}")
    return faults


def _error(id_: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": message}}


def _text_result(text: str, is_error: bool) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


class StdioServer:
    """An MCP server of tools: `handle` answers one message; `run` serves stdin/stdout."""

    def __init__(self, name: str, version: str, instructions: str = "") -> None:
        self._info = {"name": name, "version": version}
        self._instructions = instructions
        self._tools: dict[str, Tool] = {}

    def add_tool(self, function: Callable[..., str], *, name: str, description: str) -> None:
        self._tools[name] = Tool(name, description, function, input_schema(function))

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
        params = message.get("params") or {}
        if not isinstance(params, dict):
            return _error(id_, INVALID_PARAMS, "params must be an object")
        if method == "initialize":
            result: dict[str, Any] = self._initialize(params)
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            result = {"tools": [tool.listing() for tool in self._tools.values()]}
        elif method == "tools/call":
            tool = self._tools.get(params.get("name"))  # type: ignore[arg-type]
            if tool is None:
                return _error(id_, INVALID_PARAMS, f"unknown tool: {params.get('name')!r}")
            result = self._call(tool, params.get("arguments") or {})
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
        for line in stdin:
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError as exc:
                reply: dict[str, Any] | None = _error(None, PARSE_ERROR, f"not JSON: {exc}")
            else:
                reply = self.handle(message)
            if reply is not None:
                data = json.dumps(reply, ensure_ascii=False, separators=(",", ":"))
                stdout.write(data.encode() + b"\n")
                stdout.flush()
