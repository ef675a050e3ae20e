"""Desktop notifications, where the machine has a notifier; silently nothing where it has not.

`notify-send` (libnotify: Linux desktops) or, on macOS, `osascript` (`display notification`).
Found on the daemon's PATH at each call, so installing one later needs no restart. A missing
notifier, a notifier that fails (no session bus on a server) or one that hangs past
`TIMEOUT_SECONDS` is logged at debug level and otherwise ignored: a notification is a
courtesy, never a reason for a report to fail.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from typing import Final

import anyio
import structlog

TIMEOUT_SECONDS: Final = 5.0

log = structlog.get_logger("alpd.desktop")


def _applescript_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def notifier_argv(title: str, body: str, *, platform: str = sys.platform) -> list[str] | None:
    """The command that shows one notification here, or None when there is no notifier."""
    send = shutil.which("notify-send")
    if send is not None:
        return [send, "--app-name=alp", "--", title, body]
    if platform == "darwin":
        osascript = shutil.which("osascript")
        if osascript is not None:
            script = (
                f"display notification {_applescript_string(body)} "
                f"with title {_applescript_string(title)}"
            )
            return [osascript, "-e", script]
    return None


async def notify_desktop(title: str, body: str) -> bool:
    """Show a notification if this machine can; whether one was shown."""
    argv = notifier_argv(title, body)
    if argv is None:
        return False
    try:
        with anyio.fail_after(TIMEOUT_SECONDS):
            done = await anyio.run_process(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=False,
            )
    except (OSError, TimeoutError) as exc:
        log.debug("desktop_notification_skipped", reason=type(exc).__name__)
        return False
    if done.returncode != 0:
        log.debug("desktop_notification_skipped", returncode=done.returncode)
    return done.returncode == 0


__all__ = ["notifier_argv", "notify_desktop"]
