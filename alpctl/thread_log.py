"""`alp thread log THREAD [-f] [--since T] [--root N] [--full] [--raw] [--json]`: a thread's
conversation (`thread/transcript`), the last `--limit` items, then with `-f` every new item
as the daemon announces it (`thread/transcript` notifications; an item already printed is
skipped by its cursor)."""

from __future__ import annotations

import json
import os
import sys

from alpctl.invocation import EXIT_OK, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from alpctl.command_line import Arguments
    from alpctl.invocation import Invocation


def thread_log(args: Arguments, inv: Invocation) -> int:
    if not 1 <= args.limit <= 500:
        raise UsageError("--limit takes 1..500")
    params: dict[str, Any] = {"threadId": args.id, "limit": args.limit}
    for name in ("since", "root"):
        if getattr(args, name) is not None:
            params[name] = getattr(args, name)
    if args.full:
        params["full"] = True
    out = inv.out
    watcher = None
    if args.follow:
        # subscribe first: nothing written between the page and the subscription is lost
        from alpctl.client import Client

        watcher = Client.connect(inv.socket_path)
        watcher.call("events/subscribe", {"events": ["thread/transcript"], "threadId": args.id})
    page = inv.client.call("thread/transcript", params)
    if out.as_json and not args.follow:
        out.json(page)
        return EXIT_OK
    style = out.style
    width = _width() if out.tty else 100
    seen: set[str] = set()
    _print(page.get("items", []), seen, args, out.as_json, width, style)
    if watcher is None:
        return EXIT_OK
    try:
        for note in watcher.notifications():
            if note.get("method") == "thread/transcript":
                items = (note.get("params") or {}).get("items", [])
                _print(items, seen, args, out.as_json, width, style)
    except KeyboardInterrupt:
        return EXIT_OK
    finally:
        watcher.close()
    return EXIT_OK


def _print(
    items: list[dict[str, Any]], seen: set[str], args: Arguments, as_json: bool, width: int,
    style: Any,
) -> None:  # fmt: skip
    from alpctl.transcript_render import render_item

    lines = []
    for item in items:
        cursor = item.get("cursor", "")
        if cursor in seen:
            continue
        seen.add(cursor)
        if args.root is not None and item.get("sequence") not in (args.root, None):
            continue
        if as_json or args.raw:
            lines.append(json.dumps(item, ensure_ascii=False, separators=(",", ":")))
        else:
            lines.append(render_item(item, width, style))
    if lines:
        sys.stdout.write("\n".join(lines) + "\n")
        sys.stdout.flush()


def _width() -> int:
    """The terminal's columns (`os`'s: `shutil.get_terminal_size` imports shutil, and with it
    bz2 and lzma, for every call)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0")) or os.get_terminal_size(1).columns
    except (ValueError, OSError):
        return 100
    return columns or 100
