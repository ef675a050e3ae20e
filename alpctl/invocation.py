"""What a command works with: the parsed arguments' output mode, and a daemon connection made
on first use (so `alp help` or `alp completion` never start a daemon)."""

from __future__ import annotations

import json
import os
import sys

from alpctl.client import Client, DaemonUnreachable, start_daemon
from protocol.paths import default_socket_path

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from alpctl.command_line import Arguments
    from alpctl.render import Style

EXIT_OK, EXIT_DOMAIN, EXIT_USAGE, EXIT_UNREACHABLE = 0, 1, 2, 3
#: a person pressed Ctrl-C (128 + SIGINT, as shells report it)
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """The command line asks for something that cannot be (exit 2)."""


def colour_wanted(stream: Any, environ: Any = os.environ) -> bool:
    """Colour on a terminal only, never with NO_COLOR set (https://no-color.org) or TERM=dumb."""
    if environ.get("NO_COLOR") or environ.get("TERM") == "dumb":
        return False
    return bool(stream.isatty())


class Output:
    """Where results go: JSON on stdout for scripts, or text for people."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.tty = not as_json and sys.stdout.isatty()

    @property
    def style(self) -> Style:
        """Emphasis for text output (`alpctl.render`, which has it, is text output's only)."""
        from alpctl.render import Style

        return Style(colour=not self.as_json and colour_wanted(sys.stdout))

    def emit(self, result: Any, text: str | Callable[[Any], str]) -> None:
        if self.as_json:
            self.json(result)
        else:
            print(text(result) if callable(text) else text)

    def json(self, document: Any) -> None:
        # One string, one write: `json.dump` encodes in Python and writes every token on its
        # own, a system call each when stdout is unbuffered (PYTHONUNBUFFERED=1): ~770 writes
        # for 20 threads. `json.dumps` encodes in C.
        text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
        sys.stdout.write(text + "\n")


class Invocation:
    def __init__(self, args: Arguments) -> None:
        self.args = args
        self.out = Output(args.json)
        self._client: Client | None = None

    @property
    def socket_path(self) -> str:
        return os.path.expanduser(self.args.socket) if self.args.socket else default_socket_path()

    @property
    def client(self) -> Client:
        """The daemon's connection; alp starts alpd when none answers (unless
        ALP_NO_AUTOSTART=1)."""
        if self._client is None:
            self._client = self._connect()
        return self._client

    def running_daemon(self) -> Client:
        """The daemon that runs now, never one started for the asking (`alp daemon stop`)."""
        if self._client is None:
            self._client = Client.connect(self.socket_path)
        return self._client

    def _connect(self) -> Client:
        socket_path = self.socket_path
        try:
            return Client.connect(socket_path)
        except DaemonUnreachable:
            if os.environ.get("ALP_NO_AUTOSTART") == "1":
                raise
        home = os.path.expanduser(self.args.home) if self.args.home else None
        pid = start_daemon(home, socket_path)
        print(f"alp: started alpd (pid {pid}) on {socket_path}", file=sys.stderr)
        return Client.connect(socket_path)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
