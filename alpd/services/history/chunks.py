"""Reading a transcript chunk for the history: read, parse, redact, build the rows.

What one history sync (`alpd.services.history.sync`) or import batch
(`alpd.services.history.import_batch`)
reads of a transcript: the next chunk after a cursor (`CHUNK_BYTES`, a longer line up to
`MAX_LINE_BYTES`), parsed by the pure reader of its format, **every stored text redacted**
(prompts, replies, tool inputs, output tails), and each entry turned into the row the writer
inserts (`alpd.store.entry_rows.row_of`: digest, folded body, CJK routing). Blocking and
free of the event loop and the store: it runs in the transcript reader process
(`alpd.services.history.read_worker`), or in a thread.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, Final, Protocol

import msgspec

from alpd.domain.budgets.windows import RateWindow
from alpd.domain.history.transcripts import (
    OUTPUT_TAIL_BYTES,
    Entry,
    MissingSessionIdError,
    ParseResult,
    Usage,
    read_claude,
    read_codex,
)
from alpd.domain.secrets.filter import redact
from alpd.files import open_regular
from alpd.store.entry_rows import EntryRow, row_of
from protocol import messages as m

__all__ = [
    "CHUNK_BYTES",
    "MAX_LINE_BYTES",
    "PREFIX_WINDOW",
    "Chunk",
    "Source",
    "Start",
    "cwd_of",
    "prefix_digest",
    "prefix_digest_of",
    "read_chunk",
    "redact_all",
]

#: 4 MiB a transaction: each commit is a durable fsync (synchronous=FULL), and 1 MiB chunks
#: spent a fifth of a large sync committing (bench: 0.38x -> 0.43x of the floor at 100 MB)
CHUNK_BYTES: Final = 1 << 22
MAX_LINE_BYTES: Final = 64 << 20
#: the bytes a cursor's prefix digest covers at each end of what was read (all of it up to
#: twice this): what a resume re-reads to know the file still starts as it was read
PREFIX_WINDOW: Final = 256 * 1024

_UUID_TAIL: Final = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


class Chunk(msgspec.Struct, array_like=True):
    """A parsed, redacted piece of a transcript, ready to write (and to send from the reader
    process: array-like, so the field names do not travel with every chunk)."""

    rows: list[EntryRow]
    consumed: int
    skipped: int
    session_id: str | None
    model: str | None
    usage: m.Usage
    cost_usd: float | None
    redactions: int
    parent_session_id: str | None = None
    at_end: bool = False
    #: `prefix_digest` of the file up to `consumed` (kept with the cursor, checked on resume)
    prefix: str | None = None
    #: the runtime's subscription windows last reported in this piece (Codex's rate limits)
    windows: tuple[RateWindow, ...] | None = None


class Start(Protocol):
    """Where a read starts, and what the reader carries over from the reads before it (a
    `alpd.store.history.Cursor`, or the reader process's request)."""

    @property
    def consumed(self) -> int: ...
    @property
    def session_id(self) -> str | None: ...
    @property
    def model(self) -> str | None: ...


class Source(msgspec.Struct, frozen=True):
    """A transcript file and its format (`claude` or `codex`)."""

    path: str
    format: str


def _wire_usage(entry_usage: Usage) -> m.Usage:
    return m.Usage(
        input_tokens=entry_usage.input_tokens,
        output_tokens=entry_usage.output_tokens,
        cache_read_tokens=entry_usage.cache_read_tokens,
        cache_creation_tokens=entry_usage.cache_creation_tokens,
    )


def _stored_tail(tail: str | None) -> str | None:
    """A cut tail starts mid-line, maybe inside a credential the filter cannot recognise
    without its prefix: keep it from its first whitespace on."""
    if not tail or len(tail.encode("utf-8", "surrogatepass")) < OUTPUT_TAIL_BYTES - 3:
        return tail
    cut = re.search(r"\s", tail)
    return "…" + tail[cut.start() :] if cut else "…"


# Texts are redacted many at a time, joined by this separator: the filter's per-call cost
# (its trigger checks) is then paid once per chunk instead of once per text — 5x faster on
# transcripts. No rule matches across a newline except a private-key block, which may run
# over into the next text (redacting more, never less); then the pieces no longer split back
# one-to-one and each text is redacted alone.
_SEPARATOR: Final = "\n\x1e\n"


def redact_all(texts: list[str]) -> tuple[list[str], int]:
    """`redact` of each text, and the number of findings (never what they were)."""
    if not texts:
        return texts, 0
    if not any(_SEPARATOR in text for text in texts):
        joined = redact(_SEPARATOR.join(texts))
        parts = joined.text.split(_SEPARATOR)
        if len(parts) == len(texts):
            return parts, len(joined.findings)
    results = [redact(text) for text in texts]
    return [r.text for r in results], sum(len(r.findings) for r in results)


def _strings(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, list):
        for item in value:
            _strings(item, out)
    elif isinstance(value, dict):
        for item in value.values():
            _strings(item, out)


def _replaced(value: Any, clean: Iterator[str]) -> Any:
    if isinstance(value, str):
        return next(clean)
    if isinstance(value, list):
        return [_replaced(item, clean) for item in value]
    if isinstance(value, dict):
        return {key: _replaced(item, clean) for key, item in value.items()}
    return value


def _clean_fields(entries: list[Entry]) -> tuple[list[tuple[str, str, str]], int]:
    """(text, tool input, output tail) of each entry with every secret redacted.

    A tool input is JSON: a secret inside a string value is escaped there (`\\"`, `\\n`),
    out of the filter's sight. So its string values are redacted decoded, and then the
    re-encoded whole again (for `{"password": "…"}`, where only the key says what it is).
    """
    plain: list[str] = []
    decoded: list[tuple[Any, bool] | None] = []
    for e in entries:
        plain += [e.text or "", _stored_tail(e.output_tail) or ""]
        if not e.tool_input:
            decoded.append(None)
            continue
        try:
            decoded.append((msgspec.json.decode(e.tool_input), True))
        except msgspec.DecodeError:
            decoded.append((e.tool_input, False))
        _strings(decoded[-1][0], plain)  # type: ignore[index]
    cleaned, findings = redact_all(plain)
    values = iter(cleaned)
    firsts: list[tuple[str, str]] = []
    inputs: list[str] = []
    for item in decoded:
        firsts.append((next(values), next(values)))
        if item is not None:
            value, is_json = item
            redacted = _replaced(value, values)
            inputs.append(msgspec.json.encode(redacted).decode() if is_json else redacted)
    inputs, more = redact_all(inputs)
    input_iter = iter(inputs)
    fields = [
        (text, next(input_iter) if e.tool_input else "", tail)
        for e, (text, tail) in zip(entries, firsts, strict=True)
    ]
    return fields, findings + more


def _rows(execution_id: str, entries: list[Entry]) -> tuple[list[EntryRow], int]:
    fields, findings = _clean_fields(entries)
    rows = [
        # in the order of DIGESTED_COLUMNS (but copy_of)
        row_of(
            [
                execution_id,
                e.native_id,
                e.role,
                e.kind,
                text,
                e.tool_name,
                tool_input if e.tool_input else e.tool_input,
                tail if e.output_tail is not None else None,
                e.output_sha256,
                e.timestamp,
                e.model,
                msgspec.json.encode(_wire_usage(e.usage)).decode() if e.usage is not None else None,
                e.call_id,
                int(e.is_error),
                e.offset,
            ]
        )
        for e, (text, tool_input, tail) in zip(entries, fields, strict=True)
    ]
    return rows, findings


def _parse(
    fmt: str, data: bytes, offset: int, session_id: str | None, model: str | None, path: str
) -> ParseResult:
    if fmt == "claude":
        return read_claude(data, base_offset=offset, session_id=session_id)
    try:
        return read_codex(data, base_offset=offset, session_id=session_id, model=model)
    except MissingSessionIdError:
        # Read from mid-file without the session_meta line: the file name carries the id.
        found = _UUID_TAIL.search(Path(path).stem)
        if found is None:
            raise
        return read_codex(data, base_offset=offset, session_id=found.group(0), model=model)


def prefix_digest(consumed: int, read: Callable[[int, int], bytes]) -> str:
    """A digest of the first `consumed` bytes of a file, bounded: all of them up to twice
    `PREFIX_WINDOW`, else the first and the last `PREFIX_WINDOW` of them (with the length).
    `read(start, end)` gives those bytes. An edit that changes the length of anything before
    the offset moves the bytes at its end, so it is seen however far from both ends it is;
    one that keeps the length is seen inside the windows."""
    h = hashlib.sha256(b"%d:" % consumed)
    if consumed <= 2 * PREFIX_WINDOW:
        h.update(read(0, consumed))
    else:
        h.update(read(0, PREFIX_WINDOW))
        h.update(read(consumed - PREFIX_WINDOW, consumed))
    return "sha256:" + h.hexdigest()


def prefix_digest_of(path: str, consumed: int) -> str:
    """`prefix_digest` of the file at `path` now (blocking; OSError if it cannot be read)."""
    with open_regular(path) as f:
        fd = f.fileno()
        return prefix_digest(consumed, lambda start, end: os.pread(fd, end - start, start))


def read_chunk(execution_id: str, source: Source, cursor: Start) -> Chunk:
    """Read, parse and redact the next chunk after `cursor` (blocking)."""
    with open_regular(source.path) as f:
        first = cursor.consumed
        f.seek(first)
        data = f.read(CHUNK_BYTES)
        at_end = len(data) < CHUNK_BYTES
        fd = f.fileno()

        def read(start: int, end: int) -> bytes:
            # What this read holds is not read twice (a whole small file: never).
            if first <= start and end <= first + len(data):
                return data[start - first : end - first]
            return os.pread(fd, end - start, start)

        if data and b"\n" not in data and not at_end:
            data, too_long = _long_line(f, data)
            if too_long:
                # Counted once as skipped; the copy goes on after it.
                end = first + too_long
                return Chunk(
                    [],
                    end,
                    1,
                    cursor.session_id,
                    cursor.model,
                    m.Usage(),
                    None,
                    0,
                    prefix=prefix_digest(end, read),
                )
            at_end = not data.endswith(b"\n")
        result = _parse(
            source.format, data, cursor.consumed, cursor.session_id, cursor.model, source.path
        )
        prefix = prefix_digest(result.consumed, read)
    rows, findings = _rows(execution_id, result.entries)
    base = result.history_base
    newest_model = next((e.model for e in reversed(result.entries) if e.model), None)
    return Chunk(
        rows=rows,
        consumed=result.consumed,
        skipped=result.skipped,
        session_id=result.session_id,
        model=result.model or newest_model or cursor.model,
        usage=_wire_usage(result.total_usage),
        cost_usd=result.cost_usd,
        redactions=findings,
        parent_session_id=base.parent_session_id if base is not None else None,
        at_end=at_end or result.consumed == cursor.consumed,
        prefix=prefix,
        windows=result.rate_windows,
    )


def _long_line(f: BinaryIO, head: bytes) -> tuple[bytes, int]:
    """A line longer than a chunk: ``(line, 0)`` if it ends within MAX_LINE_BYTES (or
    ``(bytes so far, 0)`` if it is an unfinished write); ``(b"", length)`` for a longer
    complete line, found without holding it, to be skipped."""
    parts = [head]
    size = len(head)
    while size < MAX_LINE_BYTES:
        more = f.read(CHUNK_BYTES)
        if not more:
            return b"".join(parts), 0
        newline = more.find(b"\n")
        if newline >= 0:
            parts.append(more[: newline + 1])
            return b"".join(parts), 0
        parts.append(more)
        size += len(more)
    parts.clear()
    while True:
        more = f.read(CHUNK_BYTES)
        if not more:
            return b"", 0
        newline = more.find(b"\n")
        if newline >= 0:
            return b"", size + newline + 1
        size += len(more)


_CWD_PROBE_BYTES: Final = 256 * 1024


class _CwdProbe(msgspec.Struct):
    cwd: str | None = None
    payload: msgspec.Raw = msgspec.Raw()


_PROBE = msgspec.json.Decoder(_CwdProbe)


def cwd_of(path: Path) -> str:
    """The working directory the session ran in, from its first lines ('' if not said)."""
    try:
        with open_regular(path) as f:
            head = f.read(_CWD_PROBE_BYTES)
    except OSError:
        return ""
    for line in head.split(b"\n")[:50]:
        try:
            probe = _PROBE.decode(line)
        except msgspec.DecodeError:
            continue
        if probe.cwd:
            return probe.cwd
        if probe.payload:
            try:
                inner = _PROBE.decode(probe.payload)
            except msgspec.DecodeError:
                continue
            if inner.cwd:
                return inner.cwd
    return ""
