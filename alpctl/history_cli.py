"""The history commands' client side: `alp search`, `alp import`, `alp thread sync`.

Stdlib only, like the rest of alpctl. Progress of a long import or sync arrives as
`history/progress` notifications on a second connection subscribed to them (the request's
own connection waits for its result), matched by a token we make up per call.
"""

from __future__ import annotations

import os
import re
import sys
import time

from alpctl.client import Client, DaemonUnreachable
from alpctl.invocation import colour_wanted

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import threading
    from datetime import datetime
    from typing import Any

    from alpctl.command_line import Arguments

# `datetime`, `threading` and argparse's error are imported where used, and the time pattern
# is compiled on first use: `alp search` imports this module, and only --since/--until and
# progress need them.

__all__ = ["call_with_progress", "import_params", "parse_time", "search_params"]

_RELATIVE = r"(\d+)\s*([smhdw])"
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_time(text: str, now: datetime | None = None) -> str:
    """ISO 8601 UTC (`…Z`) for `2026-11-30`, `2026-11-30T05:41`, or `7d` / `12h` / `30m` ago."""
    from datetime import UTC, datetime, timedelta

    now = now or datetime.now(UTC)
    relative = re.fullmatch(_RELATIVE, text.strip())
    if relative:
        moment = now - timedelta(**{_UNITS[relative.group(2)]: int(relative.group(1))})
    else:
        try:
            moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
        except ValueError as exc:
            # argparse turns this error into a usage error (exit 2) with our message
            from argparse import ArgumentTypeError

            raise ArgumentTypeError(
                f"{text!r} is not a time: use 2026-11-30, an ISO time or 7d"
            ) from exc
        if moment.tzinfo is None:
            moment = moment.astimezone()
    return (
        moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    )


def search_params(args: Arguments) -> dict[str, Any]:
    params: dict[str, Any] = {"query": " ".join(args.query), "limit": args.limit}
    pairs = (
        ("threadId", args.thread),
        ("runtime", args.runtime),
        ("role", args.role),
        ("mode", args.mode),
    )
    for key, value in pairs:
        if value:
            params[key] = value
    for key in ("since", "until"):
        value = getattr(args, key)
        if value:
            params[key] = value
    if not args.json and colour_wanted(sys.stdout):
        params.update(highlightStart="\x1b[1m", highlightEnd="\x1b[0m")
    return params


def import_params(args: Arguments) -> dict[str, Any]:
    """The directory comes from *our* environment ($CLAUDE_CONFIG_DIR, $CODEX_HOME), which
    is the user's; the daemon's may differ."""
    if args.path:
        path = os.path.realpath(os.path.expanduser(args.path))
    elif args.runtime == "claude":
        base = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.expanduser("~/.claude")
        path = os.path.join(base, "projects")
    else:
        base = os.environ.get("CODEX_HOME") or os.path.expanduser("~/.codex")
        path = os.path.join(base, "sessions")
    return {"runtime": args.runtime, "path": path}


def call_with_progress(client: Client, args: Arguments, method: str, params: dict[str, Any]) -> Any:
    """`method`, printing its progress to stderr unless the output is JSON."""
    if args.json:
        return client.call(method, params)
    import threading

    token = f"{os.getpid()}-{time.monotonic_ns()}"
    try:
        watcher = Client.connect(client.socket_path)
        watcher.call("events/subscribe", {"events": ["history/progress"]})
    except (DaemonUnreachable, OSError):
        return client.call(method, params)
    finished = threading.Event()
    printer = threading.Thread(target=_print_progress, args=(watcher, token, finished), daemon=True)
    printer.start()
    # The watcher is left open: closing it would wait for the printer's blocked read, and
    # the process ends right after anyway.
    try:
        result = client.call(method, {**params, "progressToken": token})
        # The last progress notification left before the result; let it be printed.
        finished.wait(0.5)
        return result
    finally:
        if sys.stderr.isatty():
            sys.stderr.write("\r\x1b[K")


def _print_progress(watcher: Client, token: str, finished: threading.Event) -> None:
    tty = sys.stderr.isatty()
    last = 0.0
    try:
        for note in watcher.notifications():
            progress = note.get("params") or {}
            if progress.get("token") != token:
                continue
            now = time.monotonic()
            if not tty and now - last < 1.0 and progress.get("done") != progress.get("total"):
                continue
            last = now
            line = _progress_line(progress)
            sys.stderr.write(f"\r\x1b[K{line}" if tty else f"{line}\n")
            sys.stderr.flush()
            if progress.get("done") == progress.get("total"):
                finished.set()
    except (DaemonUnreachable, OSError, ValueError):
        return


def _progress_line(p: dict[str, Any]) -> str:
    done, total = p.get("done", 0), p.get("total", 0)
    mb, total_mb = p.get("bytes", 0) / 1e6, p.get("totalBytes", 0) / 1e6
    size = f", {mb:.1f}/{total_mb:.1f} MB" if total_mb else ""
    noun = "files" if p.get("operation") == "import" else "roots"
    return f"{p.get('operation', 'sync')}: {done}/{total} {noun}{size}, {p.get('added', 0)} entries"
