"""`alp thread ACTION`: create, continue, list, show, context, close, archive, clear, undo,
log, adopt, export, import, reconcile, sync, diff, restore, budget."""

from __future__ import annotations

import os

from alpctl import render
from alpctl.command_line import runtime_options
from alpctl.invocation import EXIT_OK, Invocation, UsageError
from alpctl.lists import checked_limit, emit_list, list_options

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    from alpctl.command_line import Arguments

_IF_REVISION = (
    "refuse (THREAD_REVISION_CONFLICT) unless the thread is at this revision (the `revision` "
    "`alp thread show` and `thread list` print; not its `context rev`)"
)
#: the most threads `thread/list` sends (the daemon's bound)
THREAD_LIST_MAX = 10_000
#: how a thread is named wherever one is taken (the daemon resolves it)
THREAD_HELP = "the thread: its id, a unique id prefix, its exact title, or @last"


def _create(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--title", help="the thread's title")


def _continue(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", metavar="THREAD", help=THREAD_HELP)
    parser.add_argument("--if-revision", type=int, dest="if_revision", help=_IF_REVISION)
    runtime_options(parser)


def _list(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--closed", action="store_true", help="closed threads too")
    parser.add_argument("--archived", action="store_true", help="archived threads too")
    parser.add_argument(
        "--all", action="store_true", help="threads of every status in every workspace"
    )
    parser.add_argument(
        "--status",
        choices=["open", "closed", "archived"],
        help="only threads of this status (in this workspace unless --all)",
    )
    list_options(parser, default=200, most=THREAD_LIST_MAX)


def _show(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "id", nargs="?", metavar="THREAD", help=f"{THREAD_HELP} (default: $ALP_THREAD_ID)"
    )


def _context(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", metavar="THREAD", help=THREAD_HELP)
    parser.add_argument(
        "--rev",
        type=int,
        help="this context revision (`thread show`'s `context rev`; default: the current one)",
    )


def _revised(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", metavar="THREAD", help=THREAD_HELP)
    parser.add_argument("--if-revision", type=int, dest="if_revision", help=_IF_REVISION)


def _undo(parser: argparse.ArgumentParser) -> None:
    _revised(parser)
    _file_options(parser)


def _file_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--files",
        action="store_true",
        help="the workspace's files instead of the context: back to before the last step",
    )
    parser.add_argument(
        "--force", action="store_true", help="even if the files changed since (--files)"
    )
    parser.add_argument(
        "--dry-run", action="store_true", dest="dry_run", help="only list what would change"
    )


def _restore(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", metavar="THREAD", help=THREAD_HELP)
    parser.add_argument("--root", type=int, required=True, help="back to before root #N")
    _file_options(parser)


def _diff(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", metavar="THREAD", help=THREAD_HELP)
    parser.add_argument("--root", type=int, help="root #N (default: the last step)")
    parser.add_argument(
        "--stat", action="store_true", help="the changed files only, without the patch"
    )
    parser.add_argument(
        "--max-patch-bytes",
        type=int,
        dest="max_patch_bytes",
        default=256 * 1024,
        help="cut the patch here (up to 1 MiB)",
    )


def _log(parser: argparse.ArgumentParser) -> None:
    from alpctl.history_cli import parse_time

    parser.add_argument("id", metavar="THREAD", help=THREAD_HELP)
    parser.add_argument("-f", "--follow", action="store_true", help="keep printing as it runs")
    parser.add_argument("--since", type=parse_time, help="from this time (ISO, or 12h, 7d)")
    parser.add_argument("--root", type=int, help="only root #N")
    parser.add_argument("--full", action="store_true", help="tool calls' whole stored text")
    parser.add_argument("--raw", action="store_true", help="one JSON item a line, as sent")
    parser.add_argument("--limit", type=int, default=200, help="the last N items (1..500)")


def _adopt(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "session_id", help="the imported session's native id (or its execution id, exec_…)"
    )
    parser.add_argument("--thread", help="add it to this idle thread (default: a new thread)")
    parser.add_argument("--title", help="the new thread's title (default: its first prompt)")
    parser.add_argument("--if-revision", type=int, dest="if_revision", help=_IF_REVISION)


def _adopted(result: dict[str, Any]) -> str:
    made = "a new thread" if result.get("createdThread") else "thread"
    tid = result["threadId"]
    return (
        f"adopted {result['nativeSessionId']} as root #{result['sequence']} of {made} {tid} "
        f"({result['entries']} entries)\n  read it:     alp thread log {tid}\n"
        f"  go on:       alp thread continue {tid}"
    )


def _export(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", metavar="THREAD", help=THREAD_HELP)
    parser.add_argument("-o", "--output", help="write the bundle here (default: stdout)")


def _import(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="a bundle made by alp thread export")


def _budget(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", metavar="THREAD", help=THREAD_HELP)
    parser.add_argument("--usd", type=float, help="hard limit over all its roots, in USD")
    parser.add_argument("--soft", type=float, help="soft limit in USD: warn every door once")
    parser.add_argument("--tokens", type=int, help="hard limit in tokens")
    parser.add_argument("--soft-tokens", dest="soft_tokens", type=int, help="soft limit, tokens")
    parser.add_argument(
        "--window-percent",
        dest="window_percent",
        type=float,
        help="hard limit as a share of the runtime's subscription window: no root runs (and "
        "the running one ends) once the window is this full (where the runtime reports it)",
    )
    parser.add_argument(
        "--soft-window-percent", dest="soft_window_percent", type=float,
        help="soft limit, window percent",
    )  # fmt: skip
    parser.add_argument("--clear", action="store_true", help="remove the thread's budget")


def _budget_shown(result: dict[str, Any]) -> str:
    budget = result.get("budget")
    if budget is None:
        return "no budget (set one: alp thread budget THREAD --usd N [--soft N])"
    lines = [f"{budget['scope']} {budget['targetId']}: {budget.get('level', 'ok')}"]
    if "usd" in budget:
        soft = f" (soft {budget['softUsd']:.2f})" if "softUsd" in budget else ""
        lines.append(f"  spent {budget.get('spentUsd', 0.0):.4f} of {budget['usd']:.2f} USD{soft}")
    if "tokens" in budget:
        soft = f" (soft {budget['softTokens']:,})" if "softTokens" in budget else ""
        lines.append(
            f"  used {budget.get('spentTokens', 0):,} of {budget['tokens']:,} tokens{soft}"
        )
    if "windowPercent" in budget:
        from alpctl.background_render import window_shown

        lines.append("  " + window_shown(budget))
    return "\n".join(lines)


def _by_id(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", metavar="THREAD", help=THREAD_HELP)


#: action → (one line of help, its arguments); `alpctl.parser` builds only the invoked one
ACTIONS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "create": ("a new thread with no root yet", _create),
    "continue": ("open a new root on the thread's current context", _continue),
    "list": ("open threads of this workspace (the git toplevel of the cwd)", _list),
    "show": ("roots as a timeline, the context with each line's source, history", _show),
    "context": ("a context snapshot, each line with the execution that pinned it", _context),
    "close": ("close a thread for good (refused while a root runs)", _revised),
    "archive": ("archive a closed thread (hidden from `alp thread list`)", _revised),
    "clear": ("start clean: an empty working context (older revisions stay readable)", _revised),
    "undo": (
        "take back the last settled root's contribution (never past a clear); --files: "
        "its changes to the files",
        _undo,
    ),
    "diff": ("what a root changed in the files (from its checkpoints)", _diff),
    "budget": ("the thread's budget over all its roots: set (--usd, --soft), clear, show", _budget),
    "restore": ("put the files back to before root #N (--root N --files)", _restore),
    "log": ("the conversation: prompts, replies, tool calls, pushes, reports, markers", _log),
    "adopt": ("an imported session (`alp import`) becomes a root to read and continue", _adopt),
    "export": ("the thread as one portable, verified bundle (> FILE)", _export),
    "import": ("a bundle's thread, every digest checked, owned by you", _import),
    "reconcile": ("settle the thread's dead roots as interrupted", _by_id),
    "sync": ("re-run the history copy of every settled root (idempotent)", _by_id),
}


def list_params(args: Arguments, cwd: str) -> dict[str, Any]:
    """`thread/list` params: open threads here by default, widened by the flags."""
    params: dict[str, Any] = {"cwd": cwd, "limit": checked_limit(args, THREAD_LIST_MAX)}
    if args.all:
        params["all"] = True
    if args.status:
        params["statuses"] = [args.status]
    elif not args.all:
        wanted = {"open": True, "closed": args.closed, "archived": args.archived}
        params["statuses"] = [status for status, on in wanted.items() if on]
    return params


def _stepped(result: dict[str, Any]) -> str:
    step, thread_id = result["step"], result["thread"]["id"]
    if step["kind"] == "clear":
        done = f"cleared: context revision {step['revision']} is empty"
    else:
        done = (
            f"undid {step['executionId']}: context revision {step['revision']} is revision "
            f"{step['restoredRevision']} again"
        )
    return (
        f"{done}\n  the previous context stays readable: "
        f"alp thread context {thread_id} --rev {step['replacedRevision']}"
    )


def _restore_files(args: Arguments, inv: Invocation) -> int:
    """`thread/restore`: the plan first (printed), then the restore unless --dry-run."""
    from alpctl import checkpoints_render

    if not args.files:
        raise UsageError(
            "alp thread restore acts on the files: add --files (the context's undo is "
            "`alp thread undo THREAD`)"
        )
    params: dict[str, Any] = {"threadId": args.id, "force": args.force}
    if getattr(args, "root", None) is not None:
        params["root"] = args.root
    preview = inv.client.call("thread/restore", {**params, "dryRun": True})
    if args.dry_run or not preview["changes"]:
        inv.out.emit(preview, checkpoints_render.plan)
        return EXIT_OK
    if not inv.out.as_json:
        print(checkpoints_render.plan(preview))
    inv.out.emit(inv.client.call("thread/restore", params), checkpoints_render.restored)
    return EXIT_OK


def run(args: Arguments, inv: Invocation) -> int:
    action, out = args.action, inv.out
    if action == "create":
        thread = inv.client.call("thread/create", {"title": args.title, "cwd": os.getcwd()})
        out.emit(thread, lambda t: render.thread_header(t, out.style))
    elif action == "continue":
        from alpctl.runs import start_or_continue

        params: dict[str, Any] = {
            "threadId": args.id,
            "ifRevision": args.if_revision,
        }
        return start_or_continue(args, inv, "thread/continue", params)
    elif action == "list":
        params = list_params(args, os.getcwd())
        result = inv.client.call("thread/list", params)
        emit_list(out, args, result, result["threads"],
                  lambda r: render.thread_list(r, params, out.tty, out.style),
                  limit=params["limit"], most=THREAD_LIST_MAX)  # fmt: skip
    elif action == "show":
        thread_id = args.id or os.environ.get("ALP_THREAD_ID")
        if not thread_id:
            raise UsageError(
                "which thread? name it (id, title or @last), or run inside one ($ALP_THREAD_ID)"
            )
        result = inv.client.call("thread/show", {"threadId": thread_id})
        out.emit(result, lambda r: render.thread_show(r, out.style))
    elif action == "context":
        params = {"threadId": args.id}
        if args.rev is not None:
            params["revision"] = args.rev
        out.emit(inv.client.call("thread/context", params), render.context)
    elif action == "sync":
        from alpctl import history_cli  # progress printing: only this action needs it

        params = {"threadId": args.id}
        result = history_cli.call_with_progress(inv.client, args, "thread/sync", params)
        out.emit(result, render.sync_result)
    elif action == "log":
        from alpctl.thread_log import thread_log

        return thread_log(args, inv)
    elif action == "adopt":
        adopt: dict[str, Any] = {"sessionId": args.session_id}
        for key, value in (("threadId", args.thread), ("title", args.title),
                           ("ifRevision", args.if_revision)):  # fmt: skip
            if value is not None:
                adopt[key] = value
        out.emit(inv.client.call("thread/adopt", adopt), _adopted)
    elif action in ("export", "import"):
        from alpctl import bundles

        return bundles.export(args, inv) if action == "export" else bundles.import_(args, inv)
    elif action == "reconcile":
        result = inv.client.call("thread/reconcile", {"threadId": args.id})
        out.emit(result, lambda r: f"settled {len(r['settled'])}: {' '.join(r['settled']) or '-'}")
    elif action == "diff":
        params = {"threadId": args.id, "maxPatchBytes": 0 if args.stat else args.max_patch_bytes}
        if args.root is not None:
            params["root"] = args.root
        from alpctl import checkpoints_render

        out.emit(inv.client.call("thread/diff", params), checkpoints_render.diff)
    elif action == "budget":
        budget: dict[str, Any] = {"threadId": args.id, "clear": args.clear}
        for key, value in (("usd", args.usd), ("softUsd", args.soft), ("tokens", args.tokens),
                           ("softTokens", args.soft_tokens),
                           ("windowPercent", args.window_percent),
                           ("softWindowPercent", args.soft_window_percent)):  # fmt: skip
            if value is not None:
                budget[key] = value
        out.emit(inv.client.call("thread/budget", budget), _budget_shown)
    elif action == "restore" or (action == "undo" and args.files):
        return _restore_files(args, inv)
    else:  # close, archive, clear, undo
        ref: dict[str, Any] = {"threadId": args.id}
        if args.if_revision is not None:
            ref["ifRevision"] = args.if_revision
        result = inv.client.call(f"thread/{action}", ref)
        if action in ("clear", "undo"):
            out.emit(result, _stepped)
        else:
            out.emit(result, lambda t: render.thread_header(t, out.style))
    return EXIT_OK
