"""The transcript reader process: reads, parses and redacts transcripts for the history.

`python -m alpd.services.history.read_worker` is started by alpd
(`alpd.services.history.read_process`) the
first time an import needs it. Reading a transcript is CPU work in Python (JSON, the secret
filter, digests), and so is writing it in the store's writer thread: in one process the two
take turns on the interpreter's lock and an import ran at the speed of their sum. Here the
reading runs on another core while alpd writes.

It reads requests on stdin and answers on stdout, one at a time, each a 4-byte big-endian
length and a msgpack body: a request is a list of `ReadFile`, its answer the list of
`ReadResult` in the same order. It keeps no state between requests, and exits when stdin
closes: when alpd stops it, and when alpd dies (even by SIGKILL, the pipe closes with it).
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import IO, Final

import msgspec

from alpd.services.history.chunks import Chunk, Source, cwd_of, read_chunk

__all__ = ["ReadFile", "ReadResult", "frame", "main", "read_frame", "serve"]

HEADER_BYTES: Final = 4


class ReadFile(msgspec.Struct, frozen=True, array_like=True):
    """Read the chunk of `path` after `consumed` (with what the reads before it carried)."""

    execution_id: str
    path: str
    format: str
    consumed: int = 0
    session_id: str | None = None
    model: str | None = None
    #: also find the session's working directory (`cwd_of`)
    cwd: bool = False


class ReadResult(msgspec.Struct, array_like=True):
    """The chunk read, or why the file could not be read; and the working directory."""

    chunk: Chunk | None
    error: str | None = None
    cwd: str = ""


def serve(request: ReadFile) -> ReadResult:
    """Read one file; a file that cannot be read or parsed says why instead."""
    try:
        chunk = read_chunk(request.execution_id, Source(request.path, request.format), request)
    except Exception as exc:
        return ReadResult(None, f"{type(exc).__name__}: {exc}")
    return ReadResult(chunk, None, cwd_of(Path(request.path)) if request.cwd else "")


def frame(body: bytes) -> bytes:
    return len(body).to_bytes(HEADER_BYTES, "big") + body


def read_frame(stream: IO[bytes]) -> bytes | None:
    """The next frame's body, or None at the end of the stream before a frame began."""
    header = _read_exact(stream, HEADER_BYTES)
    if header is None:
        return None
    body = _read_exact(stream, int.from_bytes(header, "big"))
    if body is None:
        raise EOFError("the stream ended inside a frame")
    return body


def _read_exact(stream: IO[bytes], size: int) -> bytes | None:
    parts: list[bytes] = []
    while size:
        part = stream.read(size)
        if not part:
            if parts:
                raise EOFError("the stream ended inside a frame")
            return None
        parts.append(part)
        size -= len(part)
    return b"".join(parts)


def main() -> None:
    # A Ctrl-C at alpd's terminal reaches its whole process group: alpd stops us (stdin).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    requests = msgspec.msgpack.Decoder(list[ReadFile])
    encoder = msgspec.msgpack.Encoder()
    # Answers go to a copy of stdout; anything else printed lands on stderr, not in a frame.
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    stdin = sys.stdin.buffer
    try:
        while (body := read_frame(stdin)) is not None:
            results = [serve(request) for request in requests.decode(body)]
            answers.write(frame(encoder.encode(results)))
            answers.flush()
    except (BrokenPipeError, EOFError):
        pass  # alpd went away mid-request: nobody is left to answer


if __name__ == "__main__":
    main()
