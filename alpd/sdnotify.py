"""sd_notify in pure Python: tell systemd alpd is ready, stopping, or alive.

The protocol is one datagram of newline-separated `KEY=value` lines to `$NOTIFY_SOCKET`
(a leading `@` names an abstract socket). Written here rather than depended on because it is
this short, and because the usual library never unsets `NOTIFY_SOCKET`, which would let
every agent alpd spawns speak for alpd (send READY=1 or WATCHDOG=1 in its name).

Outside systemd `from_environ` gives a notifier whose methods do nothing, so callers never
branch on "are we under systemd". Send errors propagate: a lost READY=1 or WATCHDOG=1 gets
the daemon killed, so the caller should log it rather than have it vanish here.
"""

from __future__ import annotations

import os
import socket
from collections.abc import MutableMapping

__all__ = ["Notifier"]


class Notifier:
    """Sends state changes to the service manager; a no-op when `address` is None."""

    def __init__(self, address: str | None, watchdog_interval: float | None) -> None:
        self.address = address
        self.watchdog_interval = watchdog_interval
        """Seconds between WATCHDOG=1 pings (half of WatchdogSec), None when not asked."""

    @classmethod
    def from_environ(cls, environ: MutableMapping[str, str]) -> Notifier:
        """Read and remove NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID from `environ`."""
        path = environ.pop("NOTIFY_SOCKET", "")
        usec = environ.pop("WATCHDOG_USEC", "")
        watchdog_pid = environ.pop("WATCHDOG_PID", "")
        if not path:
            return cls(None, None)
        if path.startswith("@"):
            address = "\0" + path[1:]
        elif path.startswith("/"):
            address = path
        else:
            # e.g. systemd 254's vsock: addresses; failing here beats a silent start timeout.
            raise ValueError(f"NOTIFY_SOCKET={path!r}: only path and @abstract are supported")
        return cls(address, _watchdog_interval(usec, watchdog_pid))

    def notify(self, **fields: str | int) -> None:
        """Send one datagram, e.g. `notify(READY=1, STATUS="serving")`."""
        if self.address is None:
            return
        lines = []
        for key, value in fields.items():
            text = str(value)
            if "\n" in text:
                raise ValueError(f"{key} value contains a newline, which ends the field")
            lines.append(f"{key}={text}\n")
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(self.address)
            sock.sendall("".join(lines).encode())

    def ready(self) -> None:
        self.notify(READY=1)

    def stopping(self) -> None:
        self.notify(STOPPING=1)

    def watchdog(self) -> None:
        self.notify(WATCHDOG=1)

    def status(self, text: str) -> None:
        self.notify(STATUS=text)


def _watchdog_interval(usec: str, watchdog_pid: str) -> float | None:
    # WATCHDOG_PID names the one process the watchdog is for; another pid means the variables
    # were inherited from a parent and are not ours to act on (sd_watchdog_enabled(3)).
    if watchdog_pid and watchdog_pid != str(os.getpid()):
        return None
    try:
        micros = int(usec)
    except ValueError:
        return None
    return micros / 2 / 1_000_000 if micros > 0 else None
