"""`alp` / `alpctl`: argparse in, one or a few JSON-RPC calls, text or `--json` out.

Exit codes (DESIGN §6): 0 ok, 1 domain error (its name printed), 2 usage, 3 daemon
unreachable (with the socket path and how to start it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from alpctl import render
from alpctl.client import Client, DaemonUnreachable, ForeignDaemon, RpcError, start_daemon
from alpd.paths import default_socket_path

EXIT_OK, EXIT_DOMAIN, EXIT_USAGE, EXIT_UNREACHABLE = 0, 1, 2, 3


class Output:
    """Where results go: JSON on stdout for scripts, or text for people."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json

    def emit(self, result: Any, text: str | Callable[[Any], str]) -> None:
        if self.as_json:
            json.dump(result, sys.stdout, ensure_ascii=False, indent=None, separators=(",", ":"))
            sys.stdout.write("\n")
        else:
            print(text(result) if callable(text) else text)


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine output (stable)")
    parser.add_argument("--socket", help="daemon socket (default: $ALP_SOCKET or the runtime dir)")
    parser.add_argument("--home", help="state home for an auto-started daemon (default: $ALP_HOME)")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="alp", description="Threads that outlive your agent runs.")
    _common(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)

    thread = sub.add_parser("thread", help="create, list, show, close, archive threads")
    _common(thread)
    tsub = thread.add_subparsers(
        dest="action", metavar="ACTION", required=True, parser_class=Parser
    )
    create = tsub.add_parser("create", help="a new thread with no root yet")
    create.add_argument("--title")
    lst = tsub.add_parser("list", help="threads of this workspace")
    lst.add_argument("--all", action="store_true", help="every workspace, archived included")
    lst.add_argument("--status", choices=["open", "closed", "archived"])
    for name, helptext in (
        ("close", "close a thread (no reopen)"),
        ("archive", "archive a closed thread"),
    ):
        p = tsub.add_parser(name, help=helptext)
        p.add_argument("id")
        p.add_argument("--if-revision", type=int, dest="if_revision")
    for p in tsub.choices.values():
        _common(p)

    status = sub.add_parser("status", help="the daemon's state")
    _common(status)
    ping = sub.add_parser("ping", help="is the daemon there")
    _common(ping)
    return parser


def connect(args: argparse.Namespace) -> Client:
    socket_path = Path(args.socket).expanduser() if args.socket else default_socket_path()
    try:
        return Client.connect(socket_path)
    except DaemonUnreachable:
        if os.environ.get("ALP_NO_AUTOSTART") == "1":
            raise
    home = Path(args.home).expanduser() if args.home else None
    pid = start_daemon(home, socket_path)
    print(f"alp: started alpd (pid {pid}) on {socket_path}", file=sys.stderr)
    return Client.connect(socket_path)


def run_command(args: argparse.Namespace, client: Client, out: Output) -> int:
    if args.command == "ping":
        out.emit(client.call("daemon/ping"), lambda r: f"alpd {r['version']} pid {r['pid']}")
    elif args.command == "status":
        out.emit(client.call("daemon/status"), render.status)
    elif args.command == "thread":
        return run_thread(args, client, out)
    return EXIT_OK


def run_thread(args: argparse.Namespace, client: Client, out: Output) -> int:
    action = args.action
    if action == "create":
        thread = client.call("thread/create", {"title": args.title, "cwd": os.getcwd()})
        out.emit(thread, render.thread_header)
    elif action == "list":
        params: dict[str, Any] = {"cwd": os.getcwd(), "all": args.all}
        if args.status:
            params["status"] = args.status
        out.emit(client.call("thread/list", params), render.thread_list)
    elif action in ("close", "archive"):
        ref: dict[str, Any] = {"threadId": args.id}
        if args.if_revision is not None:
            ref["ifRevision"] = args.if_revision
        thread = client.call(f"thread/{action}", ref)
        out.emit(thread, render.thread_header)
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    out = Output(args.json)
    try:
        with connect(args) as client:
            return run_command(args, client, out)
    except RpcError as exc:
        if out.as_json:
            json.dump(
                {
                    "error": {
                        "code": exc.code,
                        "name": exc.name,
                        "message": exc.message,
                        "data": exc.data,
                    }
                },
                sys.stdout,
            )
            sys.stdout.write("\n")
        print(f"alp: {exc.name}: {exc.message}", file=sys.stderr)
        return EXIT_DOMAIN
    except ForeignDaemon as exc:
        print(f"alp: {exc}", file=sys.stderr)
        return EXIT_UNREACHABLE
    except DaemonUnreachable as exc:
        print(
            f"alp: no daemon answers on {exc.socket_path} ({exc.reason}).\n"
            f"  start it with: alpd --socket {exc.socket_path}   (or `make run`, or "
            "`systemctl --user start alpd.socket`)",
            file=sys.stderr,
        )
        return EXIT_UNREACHABLE
