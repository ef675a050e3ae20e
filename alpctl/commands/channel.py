"""`alp channel list`, `alp channel pair telegram|wechat`, `alp channel unpair CHANNEL
SENDER`: the chat doors and who may speak through them; `alp channel mute|unmute THREAD
[--kind K]…`: which threads' notices the chats are not sent; `alp channel trust-codex`: let
Codex run alp's approval hook (docs/channels.md)."""

from __future__ import annotations

from alpctl.clock import local_time
from alpctl.invocation import EXIT_DOMAIN, EXIT_OK, Invocation, UsageError

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from alpctl.command_line import Arguments

_EPILOG = """\
A channel runs when config.toml has its table ([channels.telegram], [channels.wechat]).
`alp channel pair telegram` prints a one-time code: send it to the bot from your own account
within 10 minutes, and that account (its numeric id) may speak to your threads from then on.
Nobody else's messages are handled. Who may speak changes only here (or on the web page),
never from a chat.
`alp channel mute THREAD` stops the thread's notices (reports, handoffs, failures, budget;
--kind picks some) reaching any chat; answers, approvals and memory proposals still come.
`alp channel unmute THREAD` undoes it.
`alp channel trust-codex` asks Codex to trust alp's approval hook (once): with [runtimes.codex]
approvals = "chat", a headless Codex run then asks a paired chat before each shell command."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.usage = (
        "alp channel list | alp channel pair telegram|wechat | alp channel unpair CHANNEL SENDER"
        " | alp channel mute|unmute THREAD [--kind K]… | alp channel trust-codex [--codex PROGRAM]"
    )
    parser.epilog = _EPILOG
    parser.add_argument(
        "action", nargs="?", choices=("list", "pair", "unpair", "mute", "unmute", "trust-codex"),
        default="list",
        help="list (default), pair CHANNEL, unpair CHANNEL SENDER, mute|unmute THREAD",
    )  # fmt: skip
    parser.add_argument("channel", nargs="?", help="telegram or wechat (mute: the thread)")
    parser.add_argument("sender", nargs="?", help="the sender's id (`alp channel list`)")
    parser.add_argument(
        "--kind", action="append", choices=("reports", "handoffs", "failures", "budget"),
        help="mute|unmute only these notices (repeatable; default: all four)",
    )  # fmt: skip
    parser.add_argument("--codex", help="trust-codex: the codex program (default: codex on PATH)")


def listed(result: dict[str, Any]) -> str:
    lines = []
    for channel in result["channels"]:
        detail = f" — {channel['detail']}" if channel.get("detail") else ""
        lines.append(f"{channel['channel']}: {channel['state']}{detail}")
        for sender in channel.get("senders", []):
            name = f" ({sender['name']})" if sender.get("name") else ""
            lines.append(f"  {sender['sender']}{name}, paired {local_time(sender['pairedAt'])}")
        if channel.get("pairingUntil"):
            lines.append(f"  a pairing code waits until {channel['pairingUntil']}")
    for mute in result.get("muted", []):
        lines.append(f"muted: {_thread(mute)} — {', '.join(mute['kinds'])}")
    return "\n".join(lines)


def _thread(mute: dict[str, Any]) -> str:
    return f"{mute.get('threadTitle') or '(untitled)'} ({mute['threadId']})"


def muted(result: dict[str, Any]) -> str:
    if not result["kinds"]:
        return f"{_thread(result)}: its notices reach the chats"
    return f"{_thread(result)}: no chat is sent its {', '.join(result['kinds'])}"


def paired(result: dict[str, Any]) -> str:
    return (
        f"pairing code for {result['channel']}: {result['code']}\n"
        f"{result['instructions']} (until {local_time(result['expiresAt'])})"
    )


def unpaired(result: dict[str, Any]) -> str:
    if result["removed"]:
        return f"{result['sender']} may no longer speak through {result['channel']}"
    return f"{result['sender']} was not paired with {result['channel']}"


def run(args: Arguments, inv: Invocation) -> int:
    if args.action == "list":
        inv.out.emit(inv.client.call("channel/list", {}), listed)
        return EXIT_OK
    if args.action == "trust-codex":
        return _trust_codex(args, inv)
    if args.action in ("mute", "unmute"):
        if not args.channel or args.sender:
            raise UsageError(f"alp channel {args.action} THREAD [--kind K]…")
        params: dict[str, Any] = {"threadId": args.channel}
        if args.kind:
            params["kinds"] = args.kind
        inv.out.emit(inv.client.call(f"channel/{args.action}", params), muted)
        return EXIT_OK
    if args.channel not in ("telegram", "wechat"):
        raise UsageError(f"alp channel {args.action} telegram|wechat")
    if args.action == "pair":
        inv.out.emit(inv.client.call("channel/pair", {"channel": args.channel}), paired)
        return EXIT_OK
    if not args.sender:
        raise UsageError("alp channel unpair CHANNEL SENDER (`alp channel list` shows them)")
    result = inv.client.call("channel/unpair", {"channel": args.channel, "sender": args.sender})
    inv.out.emit(result, unpaired)
    return EXIT_OK


def _trust_codex(args: Arguments, inv: Invocation) -> int:
    import sys

    from alpctl.codex_trust import TrustFailed, rendered, trust

    try:
        result = trust(args.codex)
    except TrustFailed as exc:
        print(f"alp channel trust-codex: {exc}", file=sys.stderr)
        return EXIT_DOMAIN
    inv.out.emit(result, rendered)
    return EXIT_OK
