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

from alpctl import history_cli, render
from alpctl.client import Client, DaemonUnreachable, ForeignDaemon, RpcError, start_daemon
from alpd.paths import default_socket_path

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

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


class Formatter(argparse.HelpFormatter):
    """argparse asks `shutil.get_terminal_size` for every argument it adds (importing shutil,
    bz2, lzma… on every call); the help's width comes from $COLUMNS instead."""

    def __init__(self, prog: str) -> None:
        columns = os.environ.get("COLUMNS", "")
        super().__init__(prog, width=int(columns) - 2 if columns.isdigit() else 98)


class Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine output (stable)")
    parser.add_argument("--socket", help="daemon socket (default: $ALP_SOCKET or the runtime dir)")
    parser.add_argument("--home", help="state home for an auto-started daemon (default: $ALP_HOME)")


#: options of bare `alp` that take a value (so their value is not taken for a command)
_VALUED = frozenset({"--title", "--runtime", "--agent", "--prompt", "--socket", "--home"})


def _command_word(ours: list[str]) -> str | None:
    """The first word that is not an option or an option's value."""
    tokens = iter(ours)
    for token in tokens:
        if token.startswith("-"):
            if token in _VALUED:
                next(tokens, None)
            continue
        return token
    return None


def _runtime_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runtime", help="claude, codex or command (default: the agent's)")
    parser.add_argument("--agent", help="an agent from config.toml (default: the runtime's)")
    parser.add_argument("--headless", action="store_true", help="run under alpd, no terminal")
    parser.add_argument("--prompt", help="the headless run's input")
    parser.add_argument("--wait", action="store_true", help="with --headless: block until settled")


def build_start_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="alp",
        usage="alp [--title T] [--runtime R] [--agent A] [-- RUNTIME_ARGS…]\n"
        f"       alp COMMAND …   ({', '.join(COMMANDS)}; `alp --help` for all)",
        description="Start a new Thread and run its first root in this terminal.",
    )
    _common(parser)
    parser.add_argument("--title")
    _runtime_options(parser)
    return parser


def _actions(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[Parser]:
    return parser.add_subparsers(
        dest="action", metavar="ACTION", required=True, parser_class=Parser
    )


def _add(sub: argparse._SubParsersAction[Parser], name: str, **kwargs: Any) -> Parser:
    parser = sub.add_parser(name, **kwargs)
    _common(parser)
    return parser


def _thread_command(parser: argparse.ArgumentParser) -> None:
    tsub = _actions(parser)
    _add(tsub, "create", help="a new thread with no root yet").add_argument("--title")
    cont = _add(tsub, "continue", help="open a new root on the current context")
    cont.add_argument("id")
    cont.add_argument("--if-revision", type=int, dest="if_revision")
    _runtime_options(cont)
    cont.add_argument(
        "--kind",
        choices=["interactive", "push", "scheduled", "sub-agent", "temp"],
        help="the session kind, for scripts that start runs for a reason (default: interactive)",
    )
    lst = _add(tsub, "list", help="threads of this workspace")
    lst.add_argument("--all", action="store_true", help="every workspace, archived included")
    lst.add_argument("--status", choices=["open", "closed", "archived"])
    show = _add(tsub, "show", help="roots, context and history of a thread")
    show.add_argument("id", nargs="?", help="default: $ALP_THREAD_ID")
    ctx = _add(tsub, "context", help="a context snapshot with each line's source")
    ctx.add_argument("id")
    ctx.add_argument("--rev", type=int)
    for name, helptext in (
        ("close", "close a thread (no reopen)"),
        ("archive", "archive a closed thread"),
        ("reconcile", "settle dead roots as interrupted"),
        ("sync", "re-run the history copy of every settled root (idempotent)"),
    ):
        p = _add(tsub, name, help=helptext)
        p.add_argument("id")
        if name not in ("reconcile", "sync"):
            p.add_argument("--if-revision", type=int, dest="if_revision")


def _context_command(parser: argparse.ArgumentParser) -> None:
    pin = _add(_actions(parser), "pin", help="add a line to this run's checkpoint")
    pin.add_argument(
        "kind",
        choices=["objective", "decision", "constraint", "open-item", "next-action", "resolve"],
    )


def _delegate_command(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("agent")


def _delegation_command(parser: argparse.ArgumentParser) -> None:
    _add(_actions(parser), "tree", help="the graph of a root").add_argument(
        "execution_id", nargs="?"
    )


def _execution_command(parser: argparse.ArgumentParser) -> None:
    esub = _actions(parser)
    for name in ("show", "cancel"):
        _add(esub, name).add_argument("execution_id")


def _search_command(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("query", nargs="+", help='words; "a phrase"; prefix*')
    parser.add_argument("--thread", help="only this thread")
    parser.add_argument("--runtime", help="only entries of this runtime (claude, codex …)")
    parser.add_argument("--role", choices=["user", "assistant", "tool", "system"])
    parser.add_argument(
        "--since", type=history_cli.parse_time, help="ISO time or date, or 30m / 12h / 7d ago"
    )
    parser.add_argument(
        "--until", type=history_cli.parse_time, help="ISO time or date, or 30m / 12h / 7d ago"
    )
    parser.add_argument("--limit", type=int, default=20)


def _import_command(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runtime", choices=["claude", "codex"])
    parser.add_argument(
        "--path", help="directory of sessions (default: ~/.claude/projects, $CODEX_HOME/sessions)"
    )


def _no_arguments(parser: argparse.ArgumentParser) -> None:
    return None


#: command → (help, what it adds to its parser)
COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "thread": ("create, continue, list, show threads", _thread_command),
    "context": ("pin work state from inside a run", _context_command),
    "delegate": ("from inside a run: a delegated child", _delegate_command),
    "delegation": ("delegation graphs", _delegation_command),
    "execution": ("one execution", _execution_command),
    "search": ("full-text search across your threads' history", _search_command),
    "import": ("index existing native sessions (legacy-unthreaded)", _import_command),
    "status": ("the daemon's state", _no_arguments),
    "ping": ("is the daemon there", _no_arguments),
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with `only`, just that command's branch. Every argparse parser costs
    gettext look-ups and a terminal-size probe, so a call builds only what it parses
    (`--help` and unknown commands build everything)."""
    parser = Parser(
        prog="alp",
        description="Threads that outlive your agent runs. Bare `alp [--title T] [--runtime R] "
        "[--agent A] [-- RUNTIME_ARGS…]` starts a new thread and its first run here.",
    )
    _common(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name, (helptext, build) in COMMANDS.items():
        if only is None or name == only:
            build(_add(sub, name, help=helptext))
    return parser


def split_runtime_args(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """Arguments before `--` are ours; after it they go to the runtime (or are pin text)."""
    if "--" in argv:
        index = argv.index("--")
        return argv[:index], argv[index + 1 :]
    return argv, None


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
    elif args.command == "context":
        text = " ".join(args.rest or [])
        result = client.call("context/pin", {"kind": args.kind, "text": text})
        out.emit(result, lambda r: f"pinned {r['kind']} to {r['executionId']} ({r['pins']} pins)")
    elif args.command == "delegate":
        task = " ".join(args.rest or [])
        result = client.call("execution/delegate", {"agent": args.agent, "task": task})
        out.emit(result, lambda r: render.execution(r["execution"]))
    elif args.command == "delegation":
        params = {"executionId": args.execution_id} if args.execution_id else {}
        out.emit(client.call("delegation/tree", params), render.tree)
    elif args.command == "search":
        out.emit(client.call("history/search", history_cli.search_params(args)), render.search)
    elif args.command == "import":
        params = history_cli.import_params(args)
        result = history_cli.call_with_progress(client, args, "history/import", params)
        out.emit(result, render.import_result)
    elif args.command == "execution":
        method = "execution/show" if args.action == "show" else "execution/cancel"
        out.emit(client.call(method, {"executionId": args.execution_id}), render.execution)
    return EXIT_OK


def start_or_continue(
    args: argparse.Namespace, client: Client, out: Output, method: str, params: dict[str, Any]
) -> int:
    params.update(
        {
            "runtime": args.runtime,
            "agent": args.agent,
            "headless": args.headless,
            "prompt": args.prompt,
            "args": args.rest or [],
            "cwd": os.getcwd(),
        }
    )
    if args.wait and not args.headless:
        raise UsageError("--wait needs --headless")
    result = client.call(method, {k: v for k, v in params.items() if v is not None})
    if not args.headless:
        from alpctl.launch import run_interactive

        return run_interactive(client, client.socket_path, result)
    execution = result["execution"]
    if not args.wait:
        out.emit(result, lambda r: f"{r['thread']['id']}: started {execution['id']} (headless)")
        return EXIT_OK
    while execution["status"] != "settled":
        execution = client.call("execution/wait", {"executionId": execution["id"], "timeout": 60})
    result["execution"] = execution
    out.emit(result, lambda r: render.execution(r["execution"]))
    return EXIT_OK if execution["outcome"] == "completed" else EXIT_DOMAIN


def run_thread(args: argparse.Namespace, client: Client, out: Output) -> int:
    action = args.action
    if action == "create":
        thread = client.call("thread/create", {"title": args.title, "cwd": os.getcwd()})
        out.emit(thread, render.thread_header)
    elif action == "continue":
        params: dict[str, Any] = {
            "threadId": args.id,
            "ifRevision": args.if_revision,
            "kind": args.kind,
        }
        return start_or_continue(args, client, out, "thread/continue", params)
    elif action == "list":
        params = {"cwd": os.getcwd(), "all": args.all}
        if args.status:
            params["status"] = args.status
        out.emit(client.call("thread/list", params), render.thread_list)
    elif action == "show":
        thread_id = args.id or os.environ.get("ALP_THREAD_ID")
        if not thread_id:
            raise UsageError("which thread? give an ID (or run inside a thread: $ALP_THREAD_ID)")
        out.emit(client.call("thread/show", {"threadId": thread_id}), render.thread_show)
    elif action == "context":
        params = {"threadId": args.id}
        if args.rev is not None:
            params["revision"] = args.rev
        out.emit(client.call("thread/context", params), render.context)
    elif action == "sync":
        params = {"threadId": args.id}
        result = history_cli.call_with_progress(client, args, "thread/sync", params)
        out.emit(result, render.sync_result)
    elif action == "reconcile":
        result = client.call("thread/reconcile", {"threadId": args.id})
        out.emit(result, lambda r: f"settled {len(r['settled'])}: {' '.join(r['settled']) or '-'}")
    elif action in ("close", "archive"):
        ref: dict[str, Any] = {"threadId": args.id}
        if args.if_revision is not None:
            ref["ifRevision"] = args.if_revision
        out.emit(client.call(f"thread/{action}", ref), render.thread_header)
    return EXIT_OK


def parse(argv: list[str]) -> argparse.Namespace:
    ours, rest = split_runtime_args(argv)
    command = _command_word(ours)
    if command in COMMANDS:
        args = build_parser(only=command).parse_args(ours)
    elif command is None and ("-h" in ours or "--help" in ours):
        build_parser().print_help()
        raise SystemExit(EXIT_OK)
    else:
        args = build_start_parser().parse_args(ours)
        args.command = "start"
    args.rest = rest
    return args


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:2] == ["hook", "session-start"]:
        from alpctl.hooks import session_start

        sys.stdout.write(session_start(sys.stdin, os.environ))
        return EXIT_OK
    args = parse(argv)
    if args.command is None:
        build_parser().print_help(sys.stderr)
        return EXIT_USAGE
    out = Output(args.json)
    try:
        with connect(args) as client:
            if args.command == "start":
                params: dict[str, Any] = {"title": args.title}
                return start_or_continue(args, client, out, "thread/start", params)
            return run_command(args, client, out)
    except UsageError as exc:
        print(f"alp: {exc}", file=sys.stderr)
        return EXIT_USAGE
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
