"""Reader for Claude Code transcripts (``projects/<cwd>/<sessionId>.jsonl``), sans-IO.

Mapping of line ``type`` to entries (Claude Code 2.1.328, see docs/runtimes.md; the fixtures
under ``tests/fixtures/runtimes/claude`` hold every type listed here except the last three):

=========================  ================================================================
``user``, content string   ``prompt`` (role user)
``user``, content blocks   ``tool_result`` block → ``tool_result`` (role tool; ``is_error``
                           kept, ``call_id`` = ``tool_use_id``); ``text`` block → ``prompt``;
                           images are dropped
``user`` with ``isMeta``   nothing: text the harness injected on the user's behalf
``assistant``              ``text`` → ``reply``; ``tool_use`` → ``tool_call`` (``tool_input``
                           = the input object's JSON as written); ``thinking`` → nothing
``assistant`` +            ``error`` (role system): the CLI wrote it, no model did
``isApiErrorMessage``
``cost-state``             nothing; its ``totalCostUSD`` becomes ``ParseResult.cost_usd``
``attachment``             nothing: environment, model, skill/agent listings, dates,
                           ``prompt_snapshot`` … are context the harness injects
``queue-operation``,       nothing: request logs, prompt queue, UI state
``api-request*``,
``tools-used``,
``last-prompt``,
``atis-latch``, ``mode``
``summary``, ``system``,   nothing: compaction and harness bookkeeping of other versions
``file-history-snapshot``
=========================  ================================================================

Any other ``type``, or a known type without the fields it needs, counts as ``skipped``: a new
CLI version's unknown lines make the copy visibly incomplete instead of silently short.

Native ids are the line's ``uuid``. Claude Code 2.x writes one content block per line; should
a line hold several, the first entry gets the uuid and the k-th further one ``f"{uuid}:{k}"``.
``--fork-session`` copies the parent's lines with their uuids, so keying by native id dedups
a fork against its parent (the copies differ only in ``session_id`` and ``offset``).

Usage: every content-block line of one API response repeats that response's ``usage``, so
it is counted once, on the line with ``apiBlockIndex`` 0 (or none). ``cost_usd`` is the last
``cost-state`` of the read, as the CLI reports it: cumulative over the session *including*
the history it was resumed or forked from.
"""

from __future__ import annotations

from typing import Unpack

import msgspec

from alpd.domain.history.transcripts._lines import complete_lines, is_blank
from alpd.domain.history.transcripts.entry import (
    Entry,
    EntryFields,
    Kind,
    ParseResult,
    Role,
    Usage,
    output_digest,
    output_tail,
)

__all__ = ["read_claude"]

_BOOKKEEPING = frozenset(
    {
        "attachment",
        "queue-operation",
        "api-request",
        "api-request-shape",
        "api-request-blob",
        "tools-used",
        "last-prompt",
        "atis-latch",
        "mode",
        "cost-state",
        "summary",
        "system",
        "file-history-snapshot",
    }
)


class _TextPart(msgspec.Struct):
    type: str = ""
    text: str | None = None


class _Block(msgspec.Struct):
    type: str = ""
    text: str | None = None
    id: str | None = None
    name: str | None = None
    input: msgspec.Raw = msgspec.Raw()
    tool_use_id: str | None = None
    content: str | list[_TextPart] | None = None
    is_error: bool | None = None


class _UsageIn(msgspec.Struct):
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None


class _Message(msgspec.Struct):
    model: str | None = None
    content: str | list[_Block] = ""
    usage: _UsageIn | None = None


class _Line(msgspec.Struct):
    """The top-level keys the reader needs; everything else on a line is skipped unparsed."""

    type: str
    uuid: str | None = None
    session_id: str | None = msgspec.field(default=None, name="sessionId")
    timestamp: str | None = None
    # Decoded only for user/assistant lines: api-request-blob lines also have a ``message``
    # of another shape, and most lines need none.
    message: msgspec.Raw = msgspec.Raw()
    is_meta: bool | None = msgspec.field(default=None, name="isMeta")
    is_api_error: bool | None = msgspec.field(default=None, name="isApiErrorMessage")
    api_block_index: int | None = msgspec.field(default=None, name="apiBlockIndex")
    total_cost_usd: float | None = msgspec.field(default=None, name="totalCostUSD")


_LINE = msgspec.json.Decoder(_Line)
_MESSAGE = msgspec.json.Decoder(_Message)


def read_claude(data: bytes, *, base_offset: int = 0, session_id: str | None = None) -> ParseResult:
    """Read the complete lines of a Claude Code transcript chunk.

    ``data`` is the file from ``base_offset`` on (0, or a previous result's ``consumed``).
    ``session_id`` is only a fallback for lines that lack ``sessionId``.
    """
    end, lines = complete_lines(data)
    entries: list[Entry] = []
    skipped = 0
    cost: float | None = None
    total = Usage()
    for position, raw in lines:
        try:
            line = _LINE.decode(raw)
        except msgspec.DecodeError:
            skipped += 0 if is_blank(raw) else 1
            continue
        if line.type == "cost-state" and line.total_cost_usd is not None:
            cost = line.total_cost_usd
        if line.type in _BOOKKEEPING or line.is_meta:
            continue
        session_id = line.session_id or session_id
        if line.type not in ("user", "assistant") or not line.uuid or not session_id:
            skipped += 1
            continue
        try:
            message = _MESSAGE.decode(line.message)
        except msgspec.DecodeError:
            skipped += 1
            continue
        usage = _usage(message, line)
        if usage is not None:
            total = total.plus(usage)
        base = _Base(line.uuid, session_id, line.timestamp, base_offset + position)
        made = _entries(base, line, message, usage)
        if made is None:
            skipped += 1
        else:
            entries.extend(made)
    return ParseResult(
        entries=entries,
        skipped=skipped,
        consumed=base_offset + end,
        session_id=session_id,
        cost_usd=cost,
        total_usage=total,
    )


def _usage(message: _Message, line: _Line) -> Usage | None:
    # Lines after the first block of a response repeat its usage; counting them would
    # multiply every tool-using response's tokens.
    if message.usage is None or line.type != "assistant" or (line.api_block_index or 0) != 0:
        return None
    u = message.usage
    return Usage(
        input_tokens=u.input_tokens or 0,
        output_tokens=u.output_tokens or 0,
        cache_read_tokens=u.cache_read_input_tokens or 0,
        cache_creation_tokens=u.cache_creation_input_tokens or 0,
    )


def _entries(
    base: _Base, line: _Line, message: _Message, usage: Usage | None
) -> list[Entry] | None:
    """The entries of one user/assistant line, or None when its shape is not understood."""
    if isinstance(message.content, str):
        if line.type != "user":
            return None
        return [base.make(0, "user", "prompt", text=message.content)]
    made: list[Entry] = []
    for block in message.content:
        entry = _block_entry(base, len(made), line, message, block)
        if entry is not None:
            made.append(entry)
    if made and usage is not None:
        made[0] = msgspec.structs.replace(made[0], usage=usage)
    return made


def _block_entry(
    base: _Base, index: int, line: _Line, message: _Message, block: _Block
) -> Entry | None:
    if line.type == "user":
        if block.type == "tool_result":
            output = _joined(block.content)
            return base.make(
                index,
                "tool",
                "tool_result",
                output_tail=output_tail(output),
                output_sha256=output_digest(output),
                call_id=block.tool_use_id,
                is_error=bool(block.is_error),
            )
        if block.type == "text" and block.text is not None:
            return base.make(index, "user", "prompt", text=block.text)
        return None
    if block.type == "text" and block.text is not None:
        if line.is_api_error:
            return base.make(index, "system", "error", text=block.text, model=message.model)
        return base.make(index, "assistant", "reply", text=block.text, model=message.model)
    if block.type == "tool_use":
        return base.make(
            index,
            "assistant",
            "tool_call",
            tool_name=block.name,
            tool_input=bytes(block.input).decode() if block.input else None,
            call_id=block.id,
            model=message.model,
        )
    return None


def _joined(content: str | list[_TextPart] | None) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(part.text for part in content if part.type == "text" and part.text)


class _Base:
    """The fields every entry of one line shares, and the native id rule for its blocks."""

    __slots__ = ("offset", "session_id", "timestamp", "uuid")

    def __init__(self, uuid: str, session_id: str, timestamp: str | None, offset: int) -> None:
        self.uuid = uuid
        self.session_id = session_id
        self.timestamp = timestamp
        self.offset = offset

    def make(self, index: int, role: Role, kind: Kind, **fields: Unpack[EntryFields]) -> Entry:
        return Entry(
            native_id=self.uuid if index == 0 else f"{self.uuid}:{index}",
            session_id=self.session_id,
            role=role,
            kind=kind,
            timestamp=self.timestamp,
            offset=self.offset,
            **fields,
        )
