"""`alpd`: the daemon in the foreground, and `alpd install-units`."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

from alpd import __version__


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="alpd", description="the alp daemon (foreground)")
    parser.add_argument("--version", action="version", version=f"alpd {__version__}")
    parser.add_argument("--home", help="state home (default: $ALP_HOME or ~/.alp)")
    parser.add_argument("--socket", help="socket path (default: $ALP_SOCKET or the runtime dir)")
    parser.add_argument("--config", help="config file (default: HOME/config.toml)")
    parser.add_argument("--log-json", action="store_true", default=None, help="JSON logs")
    parser.add_argument(
        "--frame-deadline",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how long a partial message may stall before the connection is cut (default 10)",
    )
    parser.add_argument(
        "--idle-timeout",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="how long a connection without a subscription or a call in flight may stay "
        "silent before it is closed (default 120)",
    )
    parser.add_argument(
        "--web",
        action="store_true",
        help="serve the web page on loopback from start (as [web] enabled = true); "
        "`alp web` prints its login URL",
    )
    sub = parser.add_subparsers(dest="command")
    units = sub.add_parser(
        "install-units", help="install the systemd user units (or launchd agent)"
    )
    units.add_argument("--target", help="directory to write the units into")
    sub.add_parser("man", help="print the manual page of alpd (roff), generated from this parser")
    return parser


def manual_page() -> str:
    from argparse_manpage.manpage import Manpage  # only here: never on the daemon's path

    page = Manpage(_parser())
    page.version = __version__
    page.source = f"alp {__version__}"
    page.manual = "alp manual"
    page.description = "the alp daemon: Threads, runs, context and history on a Unix socket"
    return str(page)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "install-units":
        return _install_units(args.target)
    if args.command == "man":
        sys.stdout.write(manual_page())
        return 0
    # Heavy imports only on the daemon path.
    import anyio

    from alpd.daemon import DaemonConfig, run_daemon
    from alpd.domain.config_fields import ConfigError
    from alpd.domain.hosts.person import PersonNotRole
    from alpd.lock import HomeLocked
    from alpd.logs import configure_logging
    from alpd.paths import UnsafeDirectory
    from alpd.rpc.connection import ConnectionLimits
    from alpd.rpc.listener import SocketInUse
    from alpd.socket_activation import SocketActivationError
    from alpd.store.db import (
        DatabaseCorrupt,
        DatabaseForeign,
        DatabaseTooNew,
        DatabaseUnavailable,
    )
    from protocol.paths import default_home, default_socket_path

    configure_logging(json=args.log_json)
    # The history writer calls Python for every row it indexes (folding, CJK routing, the
    # entry digest) while a worker thread parses the next batch: at the default 5 ms the
    # writer waits up to a whole interval for the GIL at each row. 0.5 ms made a 60 MB
    # import of many sessions ~11 % faster here (5 of 6 interleaved runs).
    sys.setswitchinterval(0.0005)
    home = Path(args.home).expanduser() if args.home else Path(default_home())
    socket_path = Path(args.socket).expanduser() if args.socket else Path(default_socket_path())
    if not args.socket:
        _say_if_the_shared_socket_dir_is_foreign(socket_path)
    config = DaemonConfig(
        home=home.absolute(),
        socket_path=socket_path.absolute(),
        config_path=Path(args.config) if args.config else home / "config.toml",
        limits=ConnectionLimits(frame_deadline=args.frame_deadline, idle_timeout=args.idle_timeout),
        web=args.web,
    )
    try:
        anyio.run(run_daemon, config, backend_options={"use_uvloop": True})
    except (
        HomeLocked,
        SocketInUse,
        UnsafeDirectory,
        DatabaseTooNew,
        DatabaseCorrupt,
        DatabaseForeign,
        DatabaseUnavailable,
        PersonNotRole,
        ConfigError,
        SocketActivationError,
    ) as exc:
        print(f"alpd: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        # A home, lock, config or socket directory the OS refuses us: the path and why.
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"alpd: cannot start: {where}{exc.strerror or exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    return 0


def running_alpd(argv0: str, python: str) -> str:
    """The path of the `alpd` that was run, for the units to start the same one: the script
    itself, or with `python -m alpd` the `alpd` script of that Python's environment (then,
    last, the one on PATH)."""
    if os.path.basename(argv0) == "alpd":
        return os.path.abspath(argv0)
    beside = os.path.join(os.path.dirname(python), "alpd")
    if os.access(beside, os.X_OK):
        return beside
    return shutil.which("alpd") or beside


def _install_units(target: str | None) -> int:
    from alpd.units import install_units

    executable = running_alpd(sys.argv[0], sys.executable)
    platform = "darwin" if sys.platform == "darwin" else "linux"
    if target:
        directory = Path(target)
    elif platform == "darwin":
        directory = Path.home() / "Library" / "LaunchAgents"
    else:
        directory = Path.home() / ".config" / "systemd" / "user"
    for path in install_units(directory, executable, platform=platform):
        print(f"wrote {path}")
    if platform == "linux":
        print("next: systemctl --user daemon-reload && systemctl --user enable --now alpd.socket")
    else:
        print(f"next: launchctl load {directory}/dev.alp.alpd.plist")
    return 0


def _say_if_the_shared_socket_dir_is_foreign(socket_path: Path) -> None:
    """`/tmp/alp-$UID` taken by someone else: the default socket moved to the home; say why."""
    import structlog

    from protocol.paths import default_home, foreign_socket_dir, shared_socket_dir

    shared = shared_socket_dir()
    problem = foreign_socket_dir(shared)
    if problem is None or socket_path.parent != Path(default_home()) / "run":
        return
    structlog.get_logger("alpd").warning(
        "socket_dir_refused",
        path=shared,
        problem=problem,
        socket=str(socket_path),
        message=(
            f"{shared} {problem}: another user may have created it to stop or intercept alp. "
            f"alpd serves on {socket_path} instead, where alp looks too. To go back to {shared}, "
            f"have that user or root remove it (rm -r {shared}), or set XDG_RUNTIME_DIR or "
            "ALP_SOCKET."
        ),
    )


if __name__ == "__main__":
    sys.exit(main())
