"""`alp thread export THREAD [-o FILE]` and `alp thread import FILE` (docs/bundles.md).

alpd writes the bundle under its home and answers with the path; this copies it to stdout
(or FILE) in blocks and removes it. A terminal on stdout is refused: a bundle is gzip, and
`alp thread export T > FILE` is what was meant. The summary goes to stderr when the bundle
takes stdout (`--json`: the result as JSON there), else to stdout.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys

from alpctl.invocation import EXIT_OK, Invocation, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from alpctl.command_line import Arguments

_BLOCK = 1024 * 1024


def export(args: Arguments, inv: Invocation) -> int:
    output = args.output
    if output is None and sys.stdout.isatty():
        raise UsageError(
            "a bundle is binary: redirect it (alp thread export THREAD > FILE) or use -o FILE"
        )
    result = inv.client.call("thread/export", {"threadId": args.id})
    path = result["path"]
    try:
        if output is None:
            sys.stdout.flush()
            _copy(path, sys.stdout.buffer)
            sys.stdout.buffer.flush()
        else:
            fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as target:
                _copy(path, target)
    finally:
        with contextlib.suppress(OSError):  # else alpd removes it after an hour
            os.unlink(path)
    stream = sys.stderr if output is None else sys.stdout
    if inv.out.as_json:
        stream.write(json.dumps(result, separators=(",", ":")) + "\n")
    else:
        stream.write(_exported(result) + "\n")
    return EXIT_OK


def _copy(path: str, target: Any) -> None:
    with open(path, "rb") as source:
        while block := source.read(_BLOCK):
            target.write(block)


def _exported(result: dict[str, Any]) -> str:
    counts = result["counts"]
    return (
        f"exported thread {result['threadId']}: {counts.get('executions', 0)} executions, "
        f"{counts.get('snapshots', 0)} snapshots, {counts.get('history_entries', 0)} history "
        f"entries ({result['bytes']} bytes)"
    )


def import_(args: Arguments, inv: Invocation) -> int:
    path = os.path.abspath(args.file)
    result = inv.client.call("thread/import", {"path": path})
    inv.out.emit(result, _imported)
    return EXIT_OK


def _imported(result: dict[str, Any]) -> str:
    thread = result["thread"]
    title = f" ({thread['title']})" if thread.get("title") else ""
    if not result["imported"]:
        return f"thread {thread['id']}{title} is here already as the bundle has it: nothing changed"
    counts = result["counts"]
    lines = [
        f"imported thread {thread['id']}{title}: {counts.get('executions', 0)} executions, "
        f"{counts.get('snapshots', 0)} snapshots, {counts.get('history_entries', 0)} history "
        "entries",
        f"  go on:  alp thread continue {thread['id']}   (from your checkout of its workspace)",
    ]
    lines += [f"  left out: {note}" for note in result.get("leftOut", [])]
    return "\n".join(lines)
