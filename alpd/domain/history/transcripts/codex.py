"""Reader for Codex CLI rollouts (``sessions/Y/M/D/rollout-<time>-<id>.jsonl``), sans-IO.

Every line is ``{timestamp, ordinal, type, payload}``. Mapping (Codex CLI 0.169.0, see
docs/runtimes.md; the fixtures under ``tests/fixtures/runtimes/codex`` hold each row except
those marked "older"):

====================================  ===========================================================
``response_item/message`` user        ``prompt`` when its ``content_item_kinds`` are ``user.*``;
                                      the ``<environment_context>`` message is harness context
``response_item/message`` assistant   ``reply``
``response_item/message`` developer   nothing: skills and permission instructions
``response_item/function_call``       ``tool_call`` (``tool_input`` = ``arguments``, already JSON)
``response_item/custom_tool_call``    ``tool_call`` (older; free-form ``input`` as a JSON string)
``response_item/function_call_output``  ``tool_result`` (also ``custom_tool_call_output``); an
                                      output object with ``success: false`` sets ``is_error``
``response_item/reasoning``           nothing
``event_msg/task_complete`` + error   ``error`` (role system)
``event_msg/error``                   ``error`` (older versions)
``event_msg/token_count``             nothing; ``last_token_usage`` adds to ``total_usage``;
                                      ``rate_limits.primary`` / ``.secondary`` (null with an
                                      API key) become ``rate_windows``, the last one wins
other ``event_msg``                   nothing: ``item_completed`` repeats the response items
                                      (and misses sandbox-refused commands, so it is not the
                                      source), the rest is turn bookkeeping
``session_meta``                      nothing; gives ``session_id`` and, in a fork,
                                      ``history_base``
``turn_context``                      nothing; its ``model`` labels the turn's entries
``world_state``, ``token_usage_record``, ``compacted``   nothing
====================================  ===========================================================

Any other ``type`` / ``payload.type``, or a line without the fields it needs, counts as
``skipped``. Native ids are the item's own id (``msg_…``, ``fc_…``, ``fco_…``); an entry whose
item has none (errors) gets ``f"{session_id}:{ordinal}"`` from the line's ``ordinal``, or
``f"{session_id}@{byte offset}"`` if a line has no ordinal — both stable across incremental
reads. A fork's rollout does not copy the parent's history: its ``session_meta`` points into
the parent file, exposed as ``ParseResult.history_base``; no entries are made up for it.

The session id and the model are stated once (``session_meta``) or once per turn
(``turn_context``), so an incremental read takes both back from the previous result.
Usage is not attached to entries: ``token_count`` events follow the response they measure
with no id linking them, so per-read sums go to ``ParseResult.total_usage`` instead.
"""

from __future__ import annotations

from typing import Unpack

import msgspec

from alpd.domain.budgets.windows import RateWindow
from alpd.domain.history.transcripts._lines import complete_lines, is_blank
from alpd.domain.history.transcripts.entry import (
    Entry,
    EntryFields,
    HistoryBase,
    Kind,
    MissingSessionIdError,
    ParseResult,
    Role,
    Usage,
    output_digest,
    output_tail,
)

__all__ = ["read_codex"]

_BOOKKEEPING = frozenset({"world_state", "token_usage_record", "compacted"})
_HARNESS_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md")


class _Line(msgspec.Struct):
    type: str
    timestamp: str | None = None
    ordinal: int | None = None
    payload: msgspec.Raw = msgspec.Raw()


class _HistoryBaseIn(msgspec.Struct):
    thread_id: str | None = None
    end_ordinal_exclusive: int | None = None
    end_byte_offset: int | None = None


class _SessionMeta(msgspec.Struct):
    id: str | None = None
    session_id: str | None = None
    forked_from_id: str | None = None
    history_base: _HistoryBaseIn | None = None


class _TurnContext(msgspec.Struct):
    model: str | None = None


class _ContentItem(msgspec.Struct):
    type: str = ""
    text: str | None = None


class _Passthrough(msgspec.Struct):
    content_item_kinds: list[str] | None = None


class _OutputObject(msgspec.Struct):
    content: str | None = None
    success: bool | None = None


class _ResponseItem(msgspec.Struct):
    type: str
    id: str | None = None
    role: str | None = None
    content: list[_ContentItem] | None = None
    name: str | None = None
    arguments: str | None = None
    input: str | None = None
    call_id: str | None = None
    output: str | _OutputObject | list[_ContentItem] | None = None
    internal_chat_message_metadata_passthrough: _Passthrough | None = None


class _EventKind(msgspec.Struct):
    type: str


class _Tokens(msgspec.Struct):
    input_tokens: int | None = None
    cached_input_tokens: int | None = None
    cache_write_input_tokens: int | None = None
    output_tokens: int | None = None


class _TokenInfo(msgspec.Struct):
    last_token_usage: _Tokens | None = None


class _WindowIn(msgspec.Struct):
    used_percent: float | None = None
    window_minutes: int | None = None
    resets_at: int | None = None


class _RateLimits(msgspec.Struct):
    primary: _WindowIn | None = None
    secondary: _WindowIn | None = None


class _TokenCount(msgspec.Struct):
    info: _TokenInfo | None = None
    rate_limits: _RateLimits | None = None


class _ErrorIn(msgspec.Struct):
    message: str | None = None


class _TaskComplete(msgspec.Struct):
    error: _ErrorIn | None = None


class _ErrorEvent(msgspec.Struct):
    message: str | None = None


_LINE = msgspec.json.Decoder(_Line)
_SESSION_META = msgspec.json.Decoder(_SessionMeta)
_TURN_CONTEXT = msgspec.json.Decoder(_TurnContext)
_RESPONSE_ITEM = msgspec.json.Decoder(_ResponseItem)
_EVENT_KIND = msgspec.json.Decoder(_EventKind)
_TOKEN_COUNT = msgspec.json.Decoder(_TokenCount)
_TASK_COMPLETE = msgspec.json.Decoder(_TaskComplete)
_ERROR_EVENT = msgspec.json.Decoder(_ErrorEvent)


class _Unknown(Exception):
    """A complete line of a shape this reader does not know; counted, never raised out."""


class _Reader:
    """State of one read: what earlier lines said that later lines depend on."""

    def __init__(self, base_offset: int, session_id: str | None, model: str | None) -> None:
        self.base_offset = base_offset
        self.session_id = session_id
        self.model = model
        self.history_base: HistoryBase | None = None
        self.total = Usage()
        self.windows: tuple[RateWindow, ...] | None = None
        self.entries: list[Entry] = []
        # Byte position (within this read) of the line being read.
        self.position = 0

    def line(self, position: int, line: _Line) -> None:
        self.position = position
        kind = line.type
        if kind in _BOOKKEEPING:
            return
        if not line.payload:
            raise _Unknown
        if kind == "response_item":
            self.response_item(position, line, _RESPONSE_ITEM.decode(line.payload))
        elif kind == "event_msg":
            self.event(position, line)
        elif kind == "session_meta":
            self.session_meta(_SESSION_META.decode(line.payload))
        elif kind == "turn_context":
            self.model = _TURN_CONTEXT.decode(line.payload).model or self.model
        else:
            raise _Unknown

    def session_meta(self, meta: _SessionMeta) -> None:
        self.session_id = meta.id or meta.session_id or self.session_id
        base = meta.history_base
        parent = (base.thread_id if base else None) or meta.forked_from_id
        if parent is not None:
            self.history_base = HistoryBase(
                parent_session_id=parent,
                end_ordinal_exclusive=base.end_ordinal_exclusive if base else None,
                end_byte_offset=base.end_byte_offset if base else None,
            )

    def event(self, position: int, line: _Line) -> None:
        kind = _EVENT_KIND.decode(line.payload).type
        if kind == "token_count":
            count = _TOKEN_COUNT.decode(line.payload)
            info = count.info
            if info is not None and info.last_token_usage is not None:
                self.total = self.total.plus(_usage(info.last_token_usage))
            windows = _windows(count.rate_limits)
            if windows:
                self.windows = windows
        elif kind == "task_complete":
            error = _TASK_COMPLETE.decode(line.payload).error
            if error is not None:
                self.error(position, line, error.message or "")
        elif kind == "error":
            self.error(position, line, _ERROR_EVENT.decode(line.payload).message or "")

    def error(self, position: int, line: _Line, message: str) -> None:
        self.add(self.fallback_id(position, line), line, "system", "error", text=message)

    def response_item(self, position: int, line: _Line, item: _ResponseItem) -> None:
        native_id = item.id or self.fallback_id(position, line)
        if item.type == "message":
            self.message(native_id, line, item)
        elif item.type in ("function_call", "custom_tool_call"):
            tool_input = item.arguments
            if item.type == "custom_tool_call" and item.input is not None:
                tool_input = msgspec.json.encode(item.input).decode()
            self.add(
                native_id,
                line,
                "assistant",
                "tool_call",
                tool_name=item.name,
                tool_input=tool_input,
                call_id=item.call_id,
                model=self.model,
            )
        elif item.type in ("function_call_output", "custom_tool_call_output"):
            output, failed = _output(item.output)
            self.add(
                native_id,
                line,
                "tool",
                "tool_result",
                output_tail=output_tail(output),
                output_sha256=output_digest(output),
                call_id=item.call_id,
                is_error=failed,
            )
        elif item.type != "reasoning":
            raise _Unknown

    def message(self, native_id: str, line: _Line, item: _ResponseItem) -> None:
        text = "\n".join(part.text for part in item.content or () if part.text is not None)
        if item.role == "assistant":
            self.add(native_id, line, "assistant", "reply", text=text, model=self.model)
        elif item.role == "user":
            if _is_prompt(item, text):
                self.add(native_id, line, "user", "prompt", text=text)
        elif item.role not in ("developer", "system"):
            raise _Unknown

    def fallback_id(self, position: int, line: _Line) -> str:
        if line.ordinal is not None:
            return f"{self.require_session_id()}:{line.ordinal}"
        return f"{self.require_session_id()}@{self.base_offset + position}"

    def require_session_id(self) -> str:
        if self.session_id is None:
            raise MissingSessionIdError(
                "Codex rollout read without its session_meta line: pass session_id"
            )
        return self.session_id

    def add(
        self, native_id: str, line: _Line, role: Role, kind: Kind, **fields: Unpack[EntryFields]
    ) -> None:
        self.entries.append(
            Entry(
                native_id=native_id,
                session_id=self.require_session_id(),
                role=role,
                kind=kind,
                timestamp=line.timestamp,
                offset=self.base_offset + self.position,
                **fields,
            )
        )


def read_codex(
    data: bytes,
    *,
    base_offset: int = 0,
    session_id: str | None = None,
    model: str | None = None,
) -> ParseResult:
    """Read the complete lines of a Codex rollout chunk.

    ``data`` is the file from ``base_offset`` on (0, or a previous result's ``consumed``).
    An incremental read passes the previous result's ``session_id`` and ``model``.
    Raises ``MissingSessionIdError`` if entries are found but no session id is known.
    """
    end, lines = complete_lines(data)
    reader = _Reader(base_offset, session_id, model)
    skipped = 0
    for position, raw in lines:
        try:
            reader.line(position, _LINE.decode(raw))
        except msgspec.DecodeError:
            skipped += 0 if is_blank(raw) else 1
        except _Unknown:
            skipped += 1
    return ParseResult(
        entries=reader.entries,
        skipped=skipped,
        consumed=base_offset + end,
        session_id=reader.session_id,
        cost_usd=None,
        total_usage=reader.total,
        model=reader.model,
        history_base=reader.history_base,
        rate_windows=reader.windows,
    )


def _is_prompt(item: _ResponseItem, text: str) -> bool:
    passthrough = item.internal_chat_message_metadata_passthrough
    kinds = passthrough.content_item_kinds if passthrough else None
    if kinds:
        return all(kind.startswith("user.") for kind in kinds)
    # Older rollouts carry no kinds; their harness messages are recognisable by their tags.
    return not text.startswith(_HARNESS_PREFIXES)


def _output(output: str | _OutputObject | list[_ContentItem] | None) -> tuple[str, bool]:
    if output is None:
        return "", False
    if isinstance(output, str):
        return output, False
    if isinstance(output, _OutputObject):
        return output.content or "", output.success is False
    return "\n".join(part.text for part in output if part.text is not None), False


def _windows(limits: _RateLimits | None) -> tuple[RateWindow, ...]:
    if limits is None:
        return ()
    named = (("primary", limits.primary), ("secondary", limits.secondary))
    return tuple(
        RateWindow(
            name=name,  # type: ignore[arg-type]
            used_percent=window.used_percent,
            window_minutes=window.window_minutes,
            resets_at=window.resets_at,
        )
        for name, window in named
        if window is not None and window.used_percent is not None
    )


def _usage(tokens: _Tokens) -> Usage:
    cached = tokens.cached_input_tokens or 0
    return Usage(
        # OpenAI's input_tokens include the cached ones; Usage counts uncached input only.
        input_tokens=max((tokens.input_tokens or 0) - cached, 0),
        output_tokens=tokens.output_tokens or 0,
        cache_read_tokens=cached,
        cache_creation_tokens=tokens.cache_write_input_tokens or 0,
    )
