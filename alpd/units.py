"""The systemd user units and the launchd agent for alpd, and `alpd install-units`.

The templates live here as strings (not as package data) so that an installed alpd can write
them without the repository. The copies under `systemd/` are exactly
`render_units(TEMPLATE_EXECUTABLE)`, kept so by a unit test; docs/systemd.md explains every
choice in them (KillMode above all).
"""

from __future__ import annotations

import os
import plistlib
import re
from pathlib import Path

from alpd.files import fsync_dir, write_atomically
from protocol.paths import default_socket_path

__all__ = [
    "LAUNCHD_LABEL",
    "LAUNCHD_PLIST",
    "LAUNCHD_SOCKET_NAME",
    "SYSTEMD_UNITS",
    "TEMPLATE_EXECUTABLE",
    "install_units",
    "render_units",
]

# What the checked-in copies use: where `pipx`/`pip install --user` put the script.
TEMPLATE_EXECUTABLE = "%h/.local/bin/alpd"
# launchd expands nothing, so the checked-in plist can only carry placeholders; they use
# the systemd specifier names (%h home, %U uid) and install_units fills in real values.
_TEMPLATE_HOME = "%h"
_TEMPLATE_LAUNCHD_SOCKET = "/tmp/alp-%U/alpd.sock"

LAUNCHD_LABEL = "dev.alp.alpd"
LAUNCHD_PLIST = f"{LAUNCHD_LABEL}.plist"
# The key of the plist's Sockets entry, which alpd passes to launch_activate_socket().
LAUNCHD_SOCKET_NAME = "alpd"
SYSTEMD_UNITS = ("alpd.service", "alpd.socket")

_SERVICE = """\
# alpd.service: the alp daemon as a systemd user service, started by alpd.socket.
# `alpd install-units` writes this file with the real path of alpd in ExecStart.
# Every choice below is explained in docs/systemd.md.

[Unit]
Description=alp daemon (durable Threads for AI coding agents)
Requires=alpd.socket
After=alpd.socket

[Service]
Type=notify
# Only alpd itself may report READY/WATCHDOG (it also strips NOTIFY_SOCKET from children).
NotifyAccess=main
ExecStart={exec_start}
# alpd sends WATCHDOG=1 every 15 s, and only after its event loop and its database writer
# have both answered; a wedged daemon is killed and restarted.
WatchdogSec=30
Restart=on-failure
RestartSec=2
# Stopping, restarting or watchdog-killing alpd signals alpd alone: headless agent runs it
# started keep running in this unit's cgroup and the next alpd reconciles them (as
# ssh.service does for sessions). `systemctl --user kill alpd.service` ends them all.
KillMode=process
TimeoutStopSec=20
# Every connection is a descriptor: alpd caps each uid at this limit minus 256 (at most 4096;
# the rest is for its database, runs and transcripts): the default of 1024 would allow 768.
LimitNOFILE=65536
# Only restrictions agents can live with, since they inherit them: no namespaces (no
# Protect*/PrivateTmp), no address-family or W^X limits (agents need the network and node's
# JIT). The seccomp ones imply NoNewPrivileges=yes in a user unit anyway.
NoNewPrivileges=yes
LockPersonality=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes

[Install]
Also=alpd.socket
"""

_SOCKET = """\
# alpd.socket: the alp daemon's socket, held by systemd so clients can connect while alpd
# starts or restarts. The path is alp's default for $XDG_RUNTIME_DIR (see docs/systemd.md).

[Unit]
Description=alp daemon socket

[Socket]
ListenStream=%t/alp/alpd.sock
SocketMode=0600
DirectoryMode=0700
RemoveOnStop=yes

[Install]
WantedBy=sockets.target
"""

# Characters that would change the meaning of an ExecStart= word rather than be part of it.
_UNQUOTABLE = re.compile(r"[\"'\\$\x00-\x1f\x7f]")


def render_units(
    alpd_executable: str,
    *,
    home: str = _TEMPLATE_HOME,
    launchd_socket: str = _TEMPLATE_LAUNCHD_SOCKET,
) -> dict[str, str]:
    """The text of alpd.service, alpd.socket and the launchd plist, by file name.

    `alpd_executable` goes verbatim into ExecStart, so systemd expands specifiers in it
    (the template's `%h`); `install_units` refuses real paths that contain `%`.
    `home` and `launchd_socket` are for the plist only, which launchd does not expand.
    """
    if _UNQUOTABLE.search(alpd_executable):
        raise ValueError(f"alpd path {alpd_executable!r} has characters ExecStart cannot carry")
    exec_start = f'"{alpd_executable}"' if re.search(r"\s", alpd_executable) else alpd_executable
    return {
        "alpd.service": _SERVICE.format(exec_start=exec_start),
        "alpd.socket": _SOCKET,
        LAUNCHD_PLIST: _render_plist(alpd_executable, home, launchd_socket),
    }


def _render_plist(alpd_executable: str, home: str, socket_path: str) -> str:
    log = f"{home}/Library/Logs/alp/alpd.log"
    agent = {
        "Label": LAUNCHD_LABEL,
        "ProgramArguments": [alpd_executable],
        # alpd binds nothing itself when launchd passes the socket, but children get this
        # path as ALP_SOCKET, so it must be the one launchd listens on.
        "EnvironmentVariables": {"ALP_SOCKET": socket_path},
        "Sockets": {
            LAUNCHD_SOCKET_NAME: {
                "SockFamily": "Unix",
                "SockType": "stream",
                "SockPathName": socket_path,
                "SockPathMode": 0o600,
            }
        },
        # Restart=on-failure: relaunch after a non-zero exit, not after a clean stop.
        "KeepAlive": {"SuccessfulExit": False},
        # KillMode=process: launchd must not kill the process group when alpd exits.
        "AbandonProcessGroup": True,
        "StandardOutPath": log,
        "StandardErrorPath": log,
    }
    return plistlib.dumps(agent, sort_keys=True).decode()


def install_units(
    target_dir: Path,
    alpd_executable: str,
    *,
    platform: str,
    home: Path | None = None,
) -> list[Path]:
    """Write the units for `platform` (a `sys.platform` value) into `target_dir`.

    `target_dir` is `~/.config/systemd/user` on Linux, `~/Library/LaunchAgents` on macOS.
    Files are 0644, each written temp → fsync → rename so a crash never leaves half a unit.
    Returns the paths written and prints nothing: the caller tells the user the next step.
    """
    if not os.path.isabs(alpd_executable) or "%" in alpd_executable:
        raise ValueError(f"alpd path {alpd_executable!r} must be absolute and contain no '%'")
    if platform.startswith("linux"):
        rendered = render_units(alpd_executable)
        names: tuple[str, ...] = SYSTEMD_UNITS
    elif platform == "darwin":
        home = home or Path.home()
        rendered = render_units(
            alpd_executable, home=str(home), launchd_socket=str(default_socket_path())
        )
        names = (LAUNCHD_PLIST,)
        # launchd opens the log itself and does not create missing directories.
        (home / "Library" / "Logs" / "alp").mkdir(mode=0o700, parents=True, exist_ok=True)
    else:
        raise ValueError(f"no service manager units for platform {platform!r}")
    target_dir.mkdir(parents=True, exist_ok=True)
    # Unit files are read by the service manager and are not secret.
    written = [write_atomically(target_dir / name, rendered[name], mode=0o644) for name in names]
    fsync_dir(target_dir)
    return written
