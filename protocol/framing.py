"""Message framing on a byte stream, as a pure state machine (no sockets, no loop).

Per connection the framing is detected from the first non-blank byte (docs/contract.md):
`C`/`c` starts LSP-style `Content-Length:` headers, anything else is newline-delimited
JSON (NDJSON), so garbage still gets a -32700 reply on the NDJSON path instead of a close.

Bytes go in with `feed()`; complete frames come out of `next_frame()`. Every buffer is
bounded: a frame above `max_frame_bytes` is refused with `FrameTooLarge` and then skipped
(the stream stays usable); a header block that never ends is `FramingBroken` (the stream is
unrecoverable and the connection must close). For scale, h11 caps an incomplete event at
16 KiB, nginx a header at 8 KiB, LSP servers rarely cap at all (pygls reads any length); we
carry JSON documents, so the default frame cap is 1 MiB and the header cap 8 KiB. The header
cap holds whether or not the block's terminator has arrived, and a `Content-Length` value is
read only when it has at most `MAX_LENGTH_DIGITS` digits (Python refuses to parse more than
4,300 digits with a ValueError of its own, and no frame we accept needs more than seven).

A refused frame's first `HEAD_BYTES` are kept on the `FrameTooLarge` (for a Content-Length
frame the decoder waits for them, under the connection's frame deadline), so the reply can
carry the request's id: `leading_id` reads the top-level `"id"` member from them when it comes
before anything the head cuts off. A client matching replies by id (vscode-jsonrpc) would
otherwise wait forever for an answer to its request; when the id cannot be read the
connection is closed after the error, so such a client fails at once instead.

Stdlib only: the thin client imports this module.
"""

from __future__ import annotations

import enum
import json
from typing import Final

DEFAULT_MAX_FRAME_BYTES: Final = 1024 * 1024
MAX_HEADER_BYTES: Final = 8 * 1024
#: the most digits a Content-Length value may have (a longer one cannot be a frame we take)
MAX_LENGTH_DIGITS: Final = 20
#: how much of a refused frame is kept to find its request's id in
HEAD_BYTES: Final = 4096


class Framing(enum.Enum):
    NDJSON = "ndjson"
    CONTENT_LENGTH = "content-length"


class FrameError(Exception):
    """Base of framing failures."""


class FrameTooLarge(FrameError):
    """One frame exceeded the cap; it is being skipped and the stream stays usable."""

    def __init__(self, size: int, limit: int, head: bytes = b"") -> None:
        super().__init__(f"frame of {size} bytes exceeds the limit of {limit} bytes")
        self.size = size
        self.limit = limit
        #: the frame's first bytes (at most HEAD_BYTES), to read its request's id from
        self.head = head


class FramingBroken(FrameError):
    """The byte stream cannot be resynchronised; the connection must be closed."""


_BLANK: Final = b" \t\r\n"


class FrameDecoder:
    """Turns a byte stream into frames (bytes of one JSON text each)."""

    def __init__(self, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        self.max_frame_bytes = max_frame_bytes
        self.framing: Framing | None = None
        self._buffer = bytearray()
        # Bytes still to throw away from a refused frame (Content-Length), or -1 while
        # discarding an oversized NDJSON line up to its newline.
        self._discard = 0

    @property
    def has_partial_frame(self) -> bool:
        """True while part of a frame has arrived but not all of it (slowloris clock)."""
        return self._discard != 0 or bool(self._buffer.strip(_BLANK))

    def feed(self, data: bytes) -> None:
        self._buffer += data

    def next_frame(self) -> bytes | None:
        """The next complete frame, or None when more bytes are needed.

        Raises FrameTooLarge once per refused frame and FramingBroken when the stream is lost.
        """
        if not self._skip_discarded():
            return None
        if self.framing is None:
            stripped = self._buffer.lstrip(_BLANK)
            if not stripped:
                self._buffer.clear()
                return None
            del self._buffer[: len(self._buffer) - len(stripped)]
            first = stripped[0]
            self.framing = Framing.CONTENT_LENGTH if first in b"Cc" else Framing.NDJSON
        if self.framing is Framing.NDJSON:
            return self._next_line()
        return self._next_content_length()

    def _skip_discarded(self) -> bool:
        if self._discard > 0:
            taken = min(self._discard, len(self._buffer))
            del self._buffer[:taken]
            self._discard -= taken
            return self._discard == 0
        if self._discard < 0:
            newline = self._buffer.find(b"\n")
            if newline < 0:
                self._buffer.clear()
                return False
            del self._buffer[: newline + 1]
            self._discard = 0
        return True

    def _next_line(self) -> bytes | None:
        # A line's size runs from its first non-blank byte to its newline, trailing blanks
        # included: the same whether the line arrives whole or a byte at a time (a size
        # without trailing blanks could only be known once the newline came, and a partial
        # line must be refused as soon as it is too long, to keep the buffer bounded).
        while True:
            if self._buffer and self._buffer[0] in _BLANK:
                del self._buffer[: len(self._buffer) - len(self._buffer.lstrip(_BLANK))]
            newline = self._buffer.find(b"\n")
            if newline < 0:
                if len(self._buffer) > self.max_frame_bytes:
                    size = len(self._buffer)
                    head = bytes(self._buffer[:HEAD_BYTES])
                    self._buffer.clear()
                    self._discard = -1
                    raise FrameTooLarge(size, self.max_frame_bytes, head)
                return None
            line = bytes(self._buffer[:newline])
            del self._buffer[: newline + 1]
            if len(line) > self.max_frame_bytes:
                raise FrameTooLarge(len(line), self.max_frame_bytes, line[:HEAD_BYTES])
            line = line.rstrip(_BLANK)
            if line:
                return line

    def _next_content_length(self) -> bytes | None:
        stripped = self._buffer.lstrip(_BLANK)
        del self._buffer[: len(self._buffer) - len(stripped)]
        end = self._buffer.find(b"\r\n\r\n", 0, MAX_HEADER_BYTES + 4)
        if end < 0:
            if len(self._buffer) >= MAX_HEADER_BYTES + 4:
                raise FramingBroken(f"header block longer than {MAX_HEADER_BYTES} bytes")
            return None
        length = _content_length(bytes(self._buffer[:end]))
        body_start = end + 4
        if length > self.max_frame_bytes:
            head_size = min(HEAD_BYTES, self.max_frame_bytes)
            if len(self._buffer) < body_start + head_size:
                return None  # the head, to find the request's id in (frame deadline)
            head = bytes(self._buffer[body_start : body_start + head_size])
            del self._buffer[:body_start]
            self._discard = length
            self._skip_discarded()
            raise FrameTooLarge(length, self.max_frame_bytes, head)
        if len(self._buffer) < body_start + length:
            return None
        body = bytes(self._buffer[body_start : body_start + length])
        del self._buffer[: body_start + length]
        return body


def _content_length(header_block: bytes) -> int:
    length: int | None = None
    for raw in header_block.split(b"\r\n"):
        name, sep, value = raw.partition(b":")
        if not sep:
            raise FramingBroken(f"malformed header line {raw[:80]!r}")
        if name.strip().lower() == b"content-length":
            text = value.strip()
            if not text.isdigit() or len(text) > MAX_LENGTH_DIGITS:
                raise FramingBroken(f"bad Content-Length {text[:40]!r}")
            length = int(text)
    if length is None:
        raise FramingBroken("headers without Content-Length")
    return length


_SCANNER: Final = json.JSONDecoder()
_WS: Final = " \t\r\n"


class _Cut(Exception):
    """The head ends before what is being read does."""


def _skip_ws(text: str, at: int) -> int:
    while at < len(text) and text[at] in _WS:
        at += 1
    if at >= len(text):
        raise _Cut
    return at


def _skip_value(text: str, at: int) -> int:
    """The index after the JSON value starting at `at` (a bracket scan: strings are skipped
    whole, so a bracket inside one does not count)."""
    if text[at] not in "[{":
        try:
            _, end = _SCANNER.raw_decode(text, at)
        except ValueError as exc:
            raise _Cut from exc
        return end
    depth = 0
    while True:
        if at >= len(text):
            raise _Cut
        char = text[at]
        if char == '"':
            try:
                _, at = json.decoder.scanstring(text, at + 1)  # type: ignore[attr-defined]
            except ValueError as exc:
                raise _Cut from exc
            continue
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return at + 1
        at += 1


def leading_id(head: bytes) -> tuple[bool, int | str | None]:
    """(True, id) when `head`, the start of a JSON-RPC request object, holds its top-level
    `"id"` member whole, with a valid id (a string, an integer, null); else (False, None).

    Work is bounded by the head's length; nothing of the value after the id is read."""
    text = head.decode("utf-8", "replace")
    try:
        at = _skip_ws(text, 0)
        if text[at] != "{":
            return False, None  # a batch, or not an object at all
        at += 1
        while True:
            at = _skip_ws(text, at)
            if text[at] != '"':
                return False, None
            key, at = json.decoder.scanstring(text, at + 1)  # type: ignore[attr-defined]
            at = _skip_ws(text, at)
            if text[at] != ":":
                return False, None
            at = _skip_ws(text, at + 1)
            end = _skip_value(text, at)
            # The value ends inside the head only if something follows it there (a number
            # cut by the head's end would read as a shorter number).
            after = _skip_ws(text, end)
            if key == "id":
                if text[after] not in ",}":
                    return False, None
                value = json.loads(text[at:end])
                if isinstance(value, str):
                    value.encode()  # a lone surrogate cannot be echoed: UnicodeEncodeError
                valid = value is None or isinstance(value, str) or type(value) is int
                return (True, value) if valid else (False, None)
            if text[after] != ",":
                return False, None
            at = after + 1
    except (_Cut, ValueError, IndexError, RecursionError):  # UnicodeError is a ValueError
        return False, None


def encode_frame(framing: Framing, payload: bytes) -> bytes:
    """One outgoing frame; `payload` is compact JSON without raw newlines."""
    if framing is Framing.CONTENT_LENGTH:
        return b"Content-Length: %d\r\n\r\n" % len(payload) + payload
    return payload + b"\n"
