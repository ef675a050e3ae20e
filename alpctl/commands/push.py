"""`alp push THREAD --from LABEL [--agent A] [--notify] -- TEXT`: a message from a script, an
alert or a webhook into a thread — waking it if idle, queued for one round if busy."""

from __future__ import annotations

import sys

from alpctl.invocation import EXIT_OK, Invocation, UsageError

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from alpctl.command_line import Arguments

_EPILOG = """\
The text follows `--`, or comes on stdin when there is none:
  alp push THREAD_ID --from disk-alert -- "/var is 91% full"
  ./nightly-report.sh | alp push THREAD_ID --from nightly --notify
An idle thread is woken by a headless `push` run whose prompt is the text under a one-line
envelope naming LABEL (the agent reads it as information, not as your instructions); a busy
thread queues it, and everything queued is delivered as one round when the running root
settles. The run reports into the thread (`alp thread show`) and to every paired chat;
--to says where else instead (--to telegram, --to thread:ops, --to none; docs/channels.md);
--notify also announces it.
It runs the thread's last agent unless --agent names one; a thread where nothing ran yet
has none, so its first push needs --agent."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.usage = "alp push THREAD --from LABEL [--agent A] [--notify] [--to DEST]… [-- TEXT]"
    parser.epilog = _EPILOG
    parser.add_argument(
        "thread", metavar="THREAD", help="the thread to push to (id, title or @last)"
    )
    parser.add_argument(
        "--from", dest="source", required=True, metavar="LABEL",
        help="who is pushing, a short name shown to the agent (ci, disk-alert, webhook:github)",
    )  # fmt: skip
    parser.add_argument(
        "--agent",
        help="the agent to run (default: the thread's last root's; needed where none ran yet)",
    )
    parser.add_argument(
        "--notify", action="store_true",
        help="announce the run's report (thread/report event, desktop notification)",
    )  # fmt: skip
    parser.add_argument(
        "--to", action="append", metavar="DEST",
        help="where the run's report goes besides the thread (repeatable): chats (every paired "
        "chat, the default), telegram, wechat, thread:NAME (delivered there), none",
    )  # fmt: skip


def push_text(rest: list[str] | None, stdin: Any = sys.stdin, *, what: str = "") -> str:
    """The text after `--`, else stdin when it is not a terminal."""
    text = " ".join(rest or []).strip()
    if not text and rest is None and not stdin.isatty():
        text = stdin.read().strip()
    if not text:
        if what:
            raise UsageError(f"{what} is missing: put it after `--`, or pipe it in")
        raise UsageError("what to push? alp push THREAD --from LABEL -- TEXT (or pipe it in)")
    return text


def run(args: Arguments, inv: Invocation) -> int:
    params: dict[str, Any] = {
        "threadId": args.thread,
        "text": push_text(args.rest),
        "source": args.source,
        "notify": args.notify,
    }
    if args.agent:
        params["agent"] = args.agent
    if args.to:
        params["to"] = args.to
    inv.out.emit(inv.client.call("thread/push", params), pushed)
    return EXIT_OK


def pushed(result: dict[str, Any]) -> str:
    if result["status"] == "started":
        return f"woke the thread: {result['execution']['id']} (push) is running"
    waiting = result["waiting"]
    if result["status"] == "injecting":
        return (
            f"injecting (delivery {result['deliveryId']}): the running root takes it at its next "
            "tool call; if it ends first, the thread's next round delivers it"
        )
    return (
        f"queued (delivery {result['deliveryId']}): the thread is busy; {waiting} "
        f"deliver{'y waits' if waiting == 1 else 'ies wait'} for its next round"
    )
