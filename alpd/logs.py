"""structlog set-up: key-value events on stderr, JSON when stderr is not a terminal.

stdout never carries protocol data or logs (under systemd both go to the journal anyway).

A log write never raises into the daemon. When `alp` autostarts alpd, stderr is
`$ALP_HOME/alpd.log`: on a full disk (ENOSPC), a failing device (EIO) or a closed pipe, one
failed write used to end alpd, and autostart could not bring it back on the same full disk.
`SafeStream` writes straight to the file descriptor; a line that cannot be written is dropped
and counted, every later line tries again, and the first one that gets through is preceded by
a `log_lines_lost` line with the count and the error.
"""

from __future__ import annotations

import errno
import io
import json as jsonlib
import logging
import os
import sys
import threading
from datetime import UTC, datetime
from typing import TextIO, cast

import structlog


class SafeStream(io.TextIOBase):
    """A text stream over a file descriptor whose `write` never raises (see the module)."""

    def __init__(self, fd: int, *, json: bool) -> None:
        super().__init__()
        self._fd = fd
        self._json = json
        self._lock = threading.Lock()
        self._tty = _isatty(fd)
        #: lines dropped since the last write that got through
        self.lost_lines = 0
        #: lines dropped since the start (for tests and `daemon/status` one day)
        self.lost_total = 0
        self.last_error: str | None = None
        #: a write failed part-way: the log ends mid-line
        self._mid_line = False

    # io.TextIOBase

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    @property
    def errors(self) -> str:  # type: ignore[override]
        return "backslashreplace"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self._tty

    def fileno(self) -> int:
        return self._fd

    def flush(self) -> None:
        """Nothing is buffered: every write goes to the descriptor at once."""

    def write(self, text: str) -> int:
        data = text.encode("utf-8", "backslashreplace")
        with self._lock:
            if self.lost_lines and not self._write_note():
                self._lose(data)
                return len(text)
            if not self._write_all(data):
                self._lose(data)
        return len(text)

    # the rest

    def _lose(self, data: bytes) -> None:
        count = max(1, data.count(b"\n"))
        self.lost_lines += count
        self.lost_total += count

    def _write_note(self) -> bool:
        fields = {
            "count": self.lost_lines,
            "error": self.last_error,
            "event": "log_lines_lost",
            "level": "warning",
            "timestamp": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        }
        if self._json:
            line = jsonlib.dumps(fields)
        else:
            line = f"log_lines_lost count={self.lost_lines} error={self.last_error}"
        note = ("\n" if self._mid_line else "") + line + "\n"
        if not self._write_all(note.encode()):
            return False
        self.lost_lines = 0
        return True

    def _write_all(self, data: bytes) -> bool:
        view = memoryview(data)
        while view:
            try:
                written = os.write(self._fd, view)
            except InterruptedError:
                continue
            except OSError as exc:  # ENOSPC, EIO, EPIPE, EAGAIN …: never the daemon's end
                self.last_error = errno.errorcode.get(exc.errno or 0, str(exc.errno))
                self._mid_line = len(view) < len(data) or self._mid_line
                return False
            view = view[written:]
        self._mid_line = not data.endswith(b"\n")
        return True


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def configure_logging(*, json: bool | None = None, level: int = logging.INFO) -> None:
    if json is None:
        json = not _isatty(2)
    # stdout and stderr both: print(), warnings and tracebacks end up there too, and the
    # standard library's own logging (uvicorn, asyncio) writes to sys.stderr.
    stderr = SafeStream(2, json=json)
    sys.stderr = stderr
    sys.stdout = SafeStream(1, json=json)
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.WriteLoggerFactory(file=cast(TextIO, stderr)),
        cache_logger_on_first_use=True,
    )
