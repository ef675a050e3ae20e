"""`alp schedule ACTION`: run a prompt in a thread on a schedule — add, list, show, pause,
resume, rm, run."""

from __future__ import annotations

from alpctl import background_render as show
from alpctl.invocation import EXIT_OK, Invocation
from alpctl.lists import emit_list, list_options
from alpctl.parser import actions, add

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from alpctl.command_line import Arguments


def configure(parser: argparse.ArgumentParser) -> None:
    sub = actions(parser)
    new = add(
        sub,
        "add",
        "run PROMPT in THREAD on a schedule: add THREAD (--cron E [--tz Z] | --every D | "
        "--at T) [--agent A] [--runtime R] [--notify] [--to DEST]… [--timeout D] [--budget-usd N] "
        "-- PROMPT",
    )
    new.add_argument(
        "thread", metavar="THREAD", help="the thread the runs report into (id, title or @last)"
    )
    rule = new.add_mutually_exclusive_group(required=True)
    rule.add_argument("--cron", help='five fields, e.g. "0 3 * * *", or @hourly, @daily …')
    rule.add_argument("--every", help="a period of real time: 30s, 5m, 2h, 1d, 1h30m")
    rule.add_argument("--at", help="once, at an ISO time: 2026-12-01T03:00 (read in --tz)")
    new.add_argument("--tz", help="IANA zone for --cron and --at (default: this machine's)")
    new.add_argument("--agent", help="an agent from config.toml (default: the thread's last)")
    new.add_argument("--runtime", help="claude, codex or command (default: the agent's)")
    new.add_argument("--notify", action="store_true", help="announce each run's report")
    new.add_argument(
        "--to", action="append", metavar="DEST",
        help="where each report goes besides the thread (repeatable): chats (every paired "
        "chat, the default), telegram, wechat, thread:NAME (delivered there), none",
    )  # fmt: skip
    new.add_argument(
        "--timeout", help="end each run past this time: 90s, 30m, 2h (default: the agent's)"
    )
    new.add_argument(
        "--budget-usd",
        dest="budget_usd",
        type=float,
        help="end each run once it costs this much, in USD (default: the agent's)",
    )
    new.add_argument(
        "--catch-up",
        choices=["one", "none"],
        default="one",
        dest="catch_up",
        help="fires missed while alpd was down: one run for all (default), or none",
    )
    new.add_argument(
        "--total-usd", dest="total_usd", type=float,
        help="the schedule's budget over all its runs, in USD: at it, the running fire is "
        "ended and no further fire runs",
    )  # fmt: skip
    new.add_argument(
        "--soft-usd", dest="soft_usd", type=float, help="warn (every door) once spend reaches this"
    )
    new.add_argument(
        "--total-tokens", dest="total_tokens", type=int, help="the same budget in tokens"
    )
    lst = add(sub, "list", "your schedules: next fire, last result, runs, cost")
    lst.add_argument("--thread", metavar="THREAD", help="only this thread's")
    list_options(lst, default=None, most=0)
    for name, text in (
        ("show", "one schedule"),
        ("pause", "stop firing until resumed (a fire waiting for its thread is withdrawn)"),
        ("resume", "fire again, from now (fires while paused are not caught up)"),
        ("rm", "delete a schedule (its runs stay in the thread)"),
        ("run", "fire now, out of turn"),
    ):
        add(sub, name, text).add_argument("id", help="the schedule's id (sched_…)")


def run(args: Arguments, inv: Invocation) -> int:
    client, emit = inv.client, inv.out.emit
    if args.action == "add":
        params: dict[str, Any] = {
            "threadId": args.thread,
            "prompt": " ".join(args.rest or []),
            "timezone": args.tz or show.local_zone(),
            "notify": args.notify,
            "catchUp": args.catch_up,
        }
        for key in ("cron", "every", "at", "agent", "runtime"):
            if getattr(args, key):
                params[key] = getattr(args, key)
        if args.timeout:
            from alpctl.runs import timeout_seconds

            params["timeoutSeconds"] = timeout_seconds(args.timeout)
        if args.budget_usd is not None:
            params["budgetUsd"] = args.budget_usd
        for key, value in (("totalUsd", args.total_usd), ("softUsd", args.soft_usd),
                           ("totalTokens", args.total_tokens)):  # fmt: skip
            if value is not None:
                params[key] = value
        if args.to:
            params["to"] = args.to
        emit(client.call("schedule/create", params), show.schedule_detail)
    elif args.action == "list":
        listed = client.call("schedule/list", {"threadId": args.thread} if args.thread else {})
        emit_list(inv.out, args, listed, listed["schedules"], show.schedule_list)
    elif args.action == "run":
        emit(client.call("schedule/run", {"scheduleId": args.id}), show.run_result)
    elif args.action == "rm":
        emit(
            client.call("schedule/delete", {"scheduleId": args.id}),
            lambda s: f"removed {s['id']} ({s['rule']}); its runs stay in the thread",
        )
    else:
        method = args.action
        emit(client.call(f"schedule/{method}", {"scheduleId": args.id}), show.schedule_detail)
    return EXIT_OK
