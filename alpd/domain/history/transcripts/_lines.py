"""Splitting a JSONL byte buffer into complete lines, the part both readers share.

A line counts only once its newline has been written: runtimes append transcripts while
they run, so an unterminated last line is a write in progress, not corruption.
"""

from __future__ import annotations

from collections.abc import Iterator

__all__ = ["complete_lines", "is_blank"]


def complete_lines(data: bytes) -> tuple[int, Iterator[tuple[int, memoryview]]]:
    """``(end, lines)``: ``end`` is the length of the newline-terminated prefix of ``data``;
    ``lines`` yields ``(position, line)`` for each non-empty line in it (without the newline).

    Lines are memoryview slices so that the multi-KB harness lines are never copied.
    """
    end = data.rfind(b"\n") + 1
    return end, _iterate(memoryview(data), data, end)


def is_blank(line: memoryview) -> bool:
    """Whitespace only (e.g. the CR of a CRLF file): nothing, and not corruption either."""
    return not bytes(line).strip()


def _iterate(view: memoryview, data: bytes, end: int) -> Iterator[tuple[int, memoryview]]:
    position = 0
    while position < end:
        newline = data.index(b"\n", position)
        if newline > position:
            yield position, view[position:newline]
        position = newline + 1
