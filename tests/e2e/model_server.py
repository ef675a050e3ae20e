"""A scripted model server for end-to-end tests of the real runtime CLIs.

One small HTTP server on 127.0.0.1 (a random port unless told) speaks just enough of two
vendor APIs for Claude Code and Codex CLI to run against it offline:

- the Anthropic Messages API, ``POST /v1/messages`` (JSON, or SSE when ``"stream": true``),
  plus what Claude Code may touch at start (``HEAD /``, ``/api/hello``), ``/v1/models`` and
  ``/v1/messages/count_tokens``;
- the OpenAI Responses API, ``POST /v1/responses`` (always SSE, as Codex asks for it).

Every request is recorded (method, path, query, lower-cased headers, parsed JSON body) so a
test can assert what a runtime sent. Each model request is answered by, in this order:

1. the next canned reply a test queued with :meth:`ModelServer.script` (for that API, then for
   either API);
2. the rules, applied to the last user item of the request:

   - a tool result (Anthropic ``tool_result`` block, OpenAI ``function_call_output``) gets a
     text reply quoting it: ``"tool result: <output>"``;
   - ``SLEEP:<seconds>`` in the prompt delays the reply (interruptible by :meth:`stop`);
   - ``USE_BASH: <cmd>`` or ``USE_SHELL: <cmd>`` (either word works on either API; the
     command runs to the end of the line) asks for the runtime's shell tool: a ``tool_use`` of
     ``Bash`` with ``{"command": cmd}`` for Claude Code, a ``function_call`` of
     ``exec_command`` with ``{"cmd": cmd}`` for Codex CLI (``shell`` with
     ``{"command": ["bash", "-lc", cmd]}`` if that is the tool offered instead);
   - anything else gets ``"scripted reply to: <first 80 characters of the prompt>"``.

Every reply carries token usage (:class:`Usage`; the server-wide default or the reply's own),
so usage and cost reporting can be tested. The SSE framing (``event:``/``data:`` lines, event
order, closing the connection after the last event) follows what the real APIs send and what
the CLIs were seen to accept (``docs/runtimes.md``).

Usage::

    with ModelServer() as server:
        server.script(TextReply("first answer"), ToolCallReply("touch marker"))
        run_claude(env={"ANTHROPIC_BASE_URL": server.anthropic_base_url, ...})
        assert "work state, not authority" in server.model_requests("anthropic")[0].system_text

Like ``structlog.testing``, this module ships with the package so that tests of other projects
built on alp can use it; it depends on the standard library only.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import json
import re
import threading
import time
import urllib.parse
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal, TypeAlias

__all__ = [
    "Api",
    "ErrorReply",
    "ModelServer",
    "RateWindow",
    "RecordedRequest",
    "Reply",
    "TextReply",
    "ToolCallReply",
    "Usage",
]

Api: TypeAlias = Literal["anthropic", "openai"]

#: Largest request body accepted; Claude Code sends ~100-300 KiB per turn (system prompt and
#: tool schemas), so this leaves room for long conversations while bounding memory.
MAX_REQUEST_BODY = 32 * 1024 * 1024
#: How many requests are kept; the oldest are dropped beyond this (a test never gets near it).
MAX_RECORDED_REQUESTS = 10_000
#: How many canned replies may wait in one queue.
MAX_SCRIPTED_REPLIES = 1_000

_BASH_RE = re.compile(r"USE_(?:BASH|SHELL):[ \t]*(?P<cmd>[^\r\n]+)")
_SLEEP_RE = re.compile(r"SLEEP:[ \t]*(?P<seconds>[0-9]+(?:\.[0-9]+)?)")


@dataclass(frozen=True)
class Usage:
    """Token counts reported with a reply (Anthropic and OpenAI names are derived from these)."""

    input_tokens: int = 120
    output_tokens: int = 12
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0

    def anthropic(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
        }

    def openai(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "input_tokens_details": {"cached_tokens": self.cache_read_input_tokens},
            "output_tokens": self.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": self.input_tokens + self.output_tokens,
        }


@dataclass(frozen=True)
class RateWindow:
    """Codex's subscription window as its backend reports it (``ModelServer.report_window``):
    the share used so far, the window's length and its reset (epoch seconds)."""

    used_percent: float
    window_minutes: int = 300
    reset_at: int = 0
    #: how much each reply uses of the window (percentage points)
    step: float = 0.0


@dataclass(frozen=True)
class TextReply:
    """Answer with one text block / output message."""

    text: str
    delay: float = 0.0
    usage: Usage | None = None


@dataclass(frozen=True)
class ToolCallReply:
    """Ask the runtime to run ``command`` through its shell tool, optionally after some text.

    With ``tool``, call that tool instead, with ``arguments`` (an MCP tool, say
    ``mcp__alp__pin``: Claude Code lists it under that name; Codex CLI lists it inside the
    namespace ``mcp__alp``, and the call then names the namespace and the tool apart).
    """

    command: str = ""
    text: str = ""
    delay: float = 0.0
    usage: Usage | None = None
    tool: str | None = None
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ErrorReply:
    """Answer with an HTTP error in the API's error shape (e.g. 529 overloaded, 400 invalid)."""

    status: int
    message: str = "scripted error"
    error_type: str = "api_error"
    delay: float = 0.0


Reply: TypeAlias = TextReply | ToolCallReply | ErrorReply


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it."""

    method: str
    path: str
    query: Mapping[str, str]
    headers: Mapping[str, str]
    body: Any
    raw_body: bytes = field(repr=False)
    received_at: float

    @property
    def api(self) -> Api | None:
        """Which model API the request was for (``None`` for side requests)."""
        if self.method == "POST" and self.path == "/v1/messages":
            return "anthropic"
        if self.method == "POST" and self.path == "/v1/responses":
            return "openai"
        return None

    @property
    def system_text(self) -> str:
        """Anthropic: the top-level ``system`` field as one string (blocks joined by newlines)."""
        if not isinstance(self.body, dict):
            return ""
        return _joined_text(self.body.get("system"))

    def message_texts(self, role: str) -> list[str]:
        """Text of each message with ``role``: Anthropic ``messages`` or OpenAI ``input``."""
        if not isinstance(self.body, dict):
            return []
        items = self.body.get("messages") or self.body.get("input") or []
        if isinstance(items, str):
            items = [{"role": "user", "content": items}]
        return [
            _joined_text(item.get("content"))
            for item in items
            if isinstance(item, dict) and item.get("role") == role
        ]


def _joined_text(content: Any) -> str:
    """Text of a content value that is a string or a list of text-bearing blocks."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            if isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif block.get("type") == "tool_result":
                parts.append(_joined_text(block.get("content")))
    return "\n".join(parts)


def _last_user_turn(body: Mapping[str, Any], api: Api) -> tuple[str, str | None]:
    """(prompt text, tool output or None) of the last user item of a model request."""
    if api == "anthropic":
        for message in reversed(body.get("messages") or []):
            if not isinstance(message, dict) or message.get("role") != "user":
                continue
            content = message.get("content")
            if isinstance(content, list):
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        return "", _joined_text(block.get("content"))
                texts = [b.get("text", "") for b in content if isinstance(b, dict)]
                # Claude Code puts <system-reminder> blocks before the prompt.
                return (texts[-1] if texts else ""), None
            return _joined_text(content), None
        return "", None
    items = body.get("input") or []
    if isinstance(items, str):
        return items, None
    for item in reversed(items):
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call_output":
            output = item.get("output")
            return "", output if isinstance(output, str) else _joined_text(output)
        if item.get("role") == "user":
            return _joined_text(item.get("content")), None
    return "", None


def _reply_by_rules(body: Mapping[str, Any], api: Api) -> Reply:
    prompt, tool_output = _last_user_turn(body, api)
    if tool_output is not None:
        return TextReply(f"tool result: {tool_output.strip()}")
    sleep = _SLEEP_RE.search(prompt)
    delay = float(sleep["seconds"]) if sleep else 0.0
    shell = _BASH_RE.search(prompt)
    if shell:
        return ToolCallReply(shell["cmd"].strip(), text="Running it.", delay=delay)
    return TextReply(f"scripted reply to: {prompt.strip()[:80]}", delay=delay)


def _sse(event: str, data: Mapping[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


class ModelServer:
    """The scripted server; a context manager that runs it in a background thread."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, usage: Usage | None = None):
        self.usage = usage or Usage()
        self._host, self._port = host, port
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._stopping = threading.Event()
        self._requests: collections.deque[RecordedRequest] = collections.deque(
            maxlen=MAX_RECORDED_REQUESTS
        )
        self._queues: dict[Api | Literal["any"], collections.deque[Reply]] = {
            "anthropic": collections.deque(),
            "openai": collections.deque(),
            "any": collections.deque(),
        }
        self._ids = itertools.count(1)
        #: epoch seconds until which every model request meets the usage limit (`limit_until`)
        self.limited_until: float | None = None
        #: Codex's subscription window sent on every OpenAI reply (`report_window`)
        self.window: RateWindow | None = None
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> ModelServer:
        if self._httpd is not None:
            raise RuntimeError("model server already started")
        handler = type("_BoundHandler", (_Handler,), {"model_server": self})
        httpd = ThreadingHTTPServer((self._host, self._port), handler)
        httpd.daemon_threads = True
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- addresses ---------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("model server not started")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self._host}:{self.port}"

    @property
    def anthropic_base_url(self) -> str:
        """Value for ``ANTHROPIC_BASE_URL`` (no ``/v1``: Claude Code appends it)."""
        return self.url

    @property
    def openai_base_url(self) -> str:
        """Value for a Codex provider's ``base_url`` (Codex appends ``/responses``)."""
        return f"{self.url}/v1"

    # -- scripting and inspection ------------------------------------------------------------

    def script(self, *replies: Reply, api: Api | Literal["any"] = "any") -> None:
        """Queue canned replies for the next model requests (of ``api``, or of either API)."""
        with self._lock:
            queue = self._queues[api]
            if len(queue) + len(replies) > MAX_SCRIPTED_REPLIES:
                raise ValueError(f"more than {MAX_SCRIPTED_REPLIES} scripted replies queued")
            queue.extend(replies)

    def pending_replies(self) -> int:
        """How many canned replies are still queued (all APIs)."""
        with self._lock:
            return sum(len(queue) for queue in self._queues.values())

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    def model_requests(self, api: Api | None = None) -> list[RecordedRequest]:
        """The model requests (``/v1/messages`` and ``/v1/responses``), or those of ``api``."""
        return [r for r in self.requests if r.api is not None and (api is None or r.api == api)]

    def wait_for_model_requests(self, count: int, timeout: float = 10.0) -> list[RecordedRequest]:
        """Block until at least ``count`` model requests arrived; ``TimeoutError`` otherwise."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while sum(r.api is not None for r in self._requests) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"fewer than {count} model requests after {timeout} s")
                self._changed.wait(remaining)
        return self.model_requests()

    def clear(self) -> None:
        """Forget recorded requests and queued replies."""
        with self._lock:
            self._requests.clear()
            for queue in self._queues.values():
                queue.clear()

    # -- used by the handler -----------------------------------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        with self._changed:
            self._requests.append(request)
            self._changed.notify_all()

    def limit_until(self, reset: float) -> None:
        """Answer every model request with the subscription's usage limit until `reset`
        (epoch seconds), in the shape each vendor sends: HTTP 429 with Anthropic's
        ``anthropic-ratelimit-unified-*`` headers (status rejected, reset, five_hour) or
        OpenAI's ``usage_limit_reached`` body with ``resets_at`` and Codex's
        ``x-codex-primary-*`` headers. What the CLIs print for it: docs/budgets.md."""
        self.limited_until = reset

    def report_window(self, window: RateWindow) -> None:
        """Send Codex's subscription window with every OpenAI reply, as the real backend does
        for a ChatGPT sign-in: the ``x-codex-primary-*`` headers (used percent, window
        minutes, reset epoch). The used percent climbs by ``window.step`` each reply."""
        self.window = window

    def _window_headers(self) -> dict[str, str]:
        with self._lock:
            window = self.window
            if window is None:
                return {}
            used = min(100.0, window.used_percent)
            self.window = dataclasses.replace(window, used_percent=used + window.step)
        return {
            "x-codex-primary-used-percent": f"{used:g}",
            "x-codex-primary-window-minutes": str(window.window_minutes),
            "x-codex-primary-reset-at": str(window.reset_at),
        }

    def _next_reply(self, body: Mapping[str, Any], api: Api) -> Reply:
        with self._lock:
            for queue in (self._queues[api], self._queues["any"]):
                if queue:
                    return queue.popleft()
        return _reply_by_rules(body, api)

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}_alp{next(self._ids):06d}"

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)


class _Handler(BaseHTTPRequestHandler):
    """HTTP/1.1; JSON replies keep the connection, SSE replies close it after the last event."""

    protocol_version = "HTTP/1.1"
    model_server: ModelServer

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet: the recorded requests are the log."""

    def do_HEAD(self) -> None:
        self._handle(send_body=False)

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    # -- request side ------------------------------------------------------------------------

    def _read_body(self) -> bytes | None:
        """The request body (de-chunked, decompressed), or None after answering 413/415."""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            raw = self._read_chunked()
        else:
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_REQUEST_BODY:
                self._send_json(413, {"error": "request body too large"})
                return None
            raw = self.rfile.read(length)
        if raw is None:
            self._send_json(413, {"error": "request body too large"})
            return None
        encoding = self.headers.get("Content-Encoding", "identity").lower()
        if encoding in ("gzip", "deflate"):
            return zlib.decompressobj(wbits=47).decompress(raw, MAX_REQUEST_BODY)
        if encoding not in ("identity", ""):
            self._send_json(415, {"error": f"unsupported Content-Encoding {encoding}"})
            return None
        return raw

    def _read_chunked(self) -> bytes | None:
        chunks: list[bytes] = []
        total = 0
        while True:
            size = int(self.rfile.readline(1024).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline(1024).strip():
                    pass
                return b"".join(chunks)
            total += size
            if total > MAX_REQUEST_BODY:
                return None
            chunks.append(self.rfile.read(size))
            self.rfile.readline(1024)

    def _handle(self, send_body: bool = True) -> None:
        split = urllib.parse.urlsplit(self.path)
        raw = self._read_body() if self.command == "POST" else b""
        if raw is None:
            return
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        request = RecordedRequest(
            method=self.command,
            path=split.path,
            query=dict(urllib.parse.parse_qsl(split.query)),
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            raw_body=raw,
            received_at=time.time(),
        )
        self.model_server._record(request)
        if request.api is not None:
            if not isinstance(body, dict):
                self._send_json(400, _error_body(request.api, 400, "body is not a JSON object"))
                return
            self._answer_model_request(body, request.api)
        elif split.path in ("/", "/api/hello"):
            self._send_json(200, {}, send_body=send_body)
        elif split.path == "/v1/models":
            self._send_json(200, _models_listing(), send_body=send_body)
        elif split.path == "/v1/messages/count_tokens":
            self._send_json(200, {"input_tokens": self.model_server.usage.input_tokens})
        else:
            self._send_json(404, {"error": {"type": "not_found_error", "message": split.path}})

    # -- response side -----------------------------------------------------------------------

    def _send_json(self, status: int, payload: Any, send_body: bool = True) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", self.model_server._new_id("req"))
        self.end_headers()
        if send_body:
            self.wfile.write(data)

    def _send_usage_limit(self, api: Api, reset: int) -> None:
        body, headers = _usage_limit(api, reset)
        data = json.dumps(body).encode()
        self.send_response(429)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _start_sse(self, headers: Mapping[str, str] | None = None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.send_header("request-id", self.model_server._new_id("req"))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.close_connection = True

    def _emit(self, events: Iterator[bytes]) -> None:
        try:
            for event in events:
                self.wfile.write(event)
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            # The runtime hung up (killed or cancelled mid-stream): nothing left to tell it.
            self.close_connection = True

    def _answer_model_request(self, body: Mapping[str, Any], api: Api) -> None:
        server = self.model_server
        if server.limited_until is not None and time.time() < server.limited_until:
            self._send_usage_limit(api, int(server.limited_until))
            return
        reply = server._next_reply(body, api)
        server._sleep(reply.delay)
        if isinstance(reply, ErrorReply):
            self._send_json(reply.status, _error_body(api, reply.status, reply.message))
            return
        usage = reply.usage or server.usage
        model = str(body.get("model") or "scripted-model")
        if api == "openai":
            self._start_sse(server._window_headers())
            self._emit(_openai_events(server, reply, model, usage, _offered_tools(body)))
        elif body.get("stream"):
            self._start_sse()
            self._emit(_anthropic_events(server, reply, model, usage))
        else:
            self._send_json(200, _anthropic_message(server, reply, model, usage))


def _usage_limit(api: Api, reset: int) -> tuple[dict[str, Any], dict[str, str]]:
    """The body and headers of a usage-limit 429 (`ModelServer.limit_until`)."""
    left = max(0, reset - int(time.time()))
    if api == "anthropic":
        body = {"type": "error", "error": {"type": "rate_limit_error", "message": "Rate limited"}}
        return body, {
            "anthropic-ratelimit-unified-status": "rejected",
            "anthropic-ratelimit-unified-reset": str(reset),
            "anthropic-ratelimit-unified-representative-claim": "five_hour",
            "anthropic-ratelimit-unified-5h-status": "rejected",
            "anthropic-ratelimit-unified-5h-reset": str(reset),
        }
    error = {"type": "usage_limit_reached", "message": "The usage limit has been reached",
             "plan_type": "plus", "resets_at": reset, "resets_in_seconds": left}  # fmt: skip
    return {"error": error}, {
        "x-codex-primary-used-percent": "100",
        "x-codex-primary-window-minutes": "300",
        "x-codex-primary-reset-at": str(reset),
    }


def _error_body(api: Api, status: int, message: str) -> dict[str, Any]:
    if api == "anthropic":
        kind = {400: "invalid_request_error", 429: "rate_limit_error", 529: "overloaded_error"}
        return {
            "type": "error",
            "error": {"type": kind.get(status, "api_error"), "message": message},
        }
    return {
        "error": {
            "type": "server_error" if status >= 500 else "invalid_request_error",
            "message": message,
            "code": None,
            "param": None,
        }
    }


def _models_listing() -> dict[str, Any]:
    model = {
        "id": "scripted-model",
        "object": "model",
        "type": "model",
        "created": 0,
        "created_at": "2026-01-01T00:00:00Z",
        "display_name": "Scripted",
        "owned_by": "alp",
    }
    return {
        "object": "list",
        "data": [model],
        "has_more": False,
        "first_id": model["id"],
        "last_id": model["id"],
    }


def _anthropic_blocks(
    server: ModelServer, reply: TextReply | ToolCallReply
) -> list[dict[str, Any]]:
    if isinstance(reply, TextReply):
        return [{"type": "text", "text": reply.text}]
    blocks: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text else []
    name, tool_input = (
        (reply.tool, dict(reply.arguments)) if reply.tool else ("Bash", {"command": reply.command})
    )
    blocks.append(
        {"type": "tool_use", "id": server._new_id("toolu"), "name": name, "input": tool_input}
    )
    return blocks


def _anthropic_message(
    server: ModelServer, reply: TextReply | ToolCallReply, model: str, usage: Usage
) -> dict[str, Any]:
    stop = "tool_use" if isinstance(reply, ToolCallReply) else "end_turn"
    return {
        "id": server._new_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": _anthropic_blocks(server, reply),
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage.anthropic(),
    }


def _anthropic_events(
    server: ModelServer, reply: TextReply | ToolCallReply, model: str, usage: Usage
) -> Iterator[bytes]:
    message = _anthropic_message(server, reply, model, usage)
    blocks = message.pop("content")
    start_usage = {**usage.anthropic(), "output_tokens": 1}
    yield _sse(
        "message_start",
        {
            "type": "message_start",
            "message": {**message, "content": [], "stop_reason": None, "usage": start_usage},
        },
    )
    yield _sse("ping", {"type": "ping"})
    for index, block in enumerate(blocks):
        start: dict[str, Any]
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield _sse(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": start},
        )
        yield _sse(
            "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        )
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
    yield _sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": usage.output_tokens},
        },
    )
    yield _sse("message_stop", {"type": "message_stop"})


def _offered_tools(body: Mapping[str, Any]) -> set[str]:
    """Names of the offered tools; a namespace's tools also as ``<namespace>__<tool>``."""
    names: set[str] = set()
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        names.add(str(tool.get("name")))
        for inner in tool.get("tools") or [] if tool.get("type") == "namespace" else []:
            if isinstance(inner, dict):
                names.add(f"{tool.get('name')}__{inner.get('name')}")
    return names


def _openai_function(tool: str, offered: set[str]) -> dict[str, str]:
    """``{name}``, or ``{namespace, name}`` when ``tool`` is offered inside a namespace."""
    spaces = [n for n in offered if tool.startswith(f"{n}__") and tool != n]
    if tool in offered and spaces:
        namespace = max(spaces, key=len)
        return {"namespace": namespace, "name": tool.removeprefix(f"{namespace}__")}
    return {"name": tool}


def _openai_output_item(
    server: ModelServer, reply: TextReply | ToolCallReply, offered: set[str]
) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    text = reply.text
    if text:
        items.append(
            {
                "id": server._new_id("msg"),
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        )
    if isinstance(reply, ToolCallReply):
        args: Mapping[str, Any]
        function: dict[str, str]
        if reply.tool:
            function, args = _openai_function(reply.tool, offered), reply.arguments
        elif "exec_command" in offered or "shell" not in offered:
            function, args = {"name": "exec_command"}, {"cmd": reply.command}
        else:
            function, args = {"name": "shell"}, {"command": ["bash", "-lc", reply.command]}
        items.append(
            {
                "id": server._new_id("fc"),
                "type": "function_call",
                "status": "completed",
                "call_id": server._new_id("call"),
                **function,
                "arguments": json.dumps(args),
            }
        )
    return items


def _openai_events(
    server: ModelServer,
    reply: TextReply | ToolCallReply,
    model: str,
    usage: Usage,
    offered: set[str],
) -> Iterator[bytes]:
    seq = itertools.count()
    response = {
        "id": server._new_id("resp"),
        "object": "response",
        "created_at": int(time.time()),
        "status": "in_progress",
        "model": model,
        "output": [],
        "usage": None,
    }

    def event(kind: str, **fields: Any) -> bytes:
        return _sse(kind, {"type": kind, "sequence_number": next(seq), **fields})

    yield event("response.created", response=response)
    yield event("response.in_progress", response=response)
    items = _openai_output_item(server, reply, offered)
    for index, item in enumerate(items):
        ids = {"item_id": item["id"], "output_index": index}
        if item["type"] == "message":
            text = item["content"][0]["text"]
            part = {"type": "output_text", "text": "", "annotations": []}
            yield event(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "content": []},
            )
            yield event("response.content_part.added", **ids, content_index=0, part=part)
            yield event("response.output_text.delta", **ids, content_index=0, delta=text)
            yield event("response.output_text.done", **ids, content_index=0, text=text)
            yield event(
                "response.content_part.done", **ids, content_index=0, part={**part, "text": text}
            )
        else:
            yield event(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "arguments": ""},
            )
            yield event("response.function_call_arguments.delta", **ids, delta=item["arguments"])
            yield event("response.function_call_arguments.done", **ids, arguments=item["arguments"])
        yield event("response.output_item.done", output_index=index, item=item)
    done = {**response, "status": "completed", "output": items, "usage": usage.openai()}
    yield event("response.completed", response=done)
