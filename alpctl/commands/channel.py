"""`alp channel list`, `alp channel pair telegram|wechat`, `alp channel unpair CHANNEL
SENDER`: the chat doors and who may speak through them (docs/channels.md)."""

from __future__ import annotations

from alpctl.clock import local_time
from alpctl.invocation import EXIT_OK, Invocation, UsageError

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
never from a chat."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.usage = (
        "alp channel list | alp channel pair telegram|wechat | alp channel unpair CHANNEL SENDER"
    )
    parser.epilog = _EPILOG
    parser.add_argument(
        "action", nargs="?", choices=("list", "pair", "unpair"), default="list",
        help="list (default), pair CHANNEL or unpair CHANNEL SENDER",
    )  # fmt: skip
    parser.add_argument("channel", nargs="?", help="telegram or wechat")
    parser.add_argument("sender", nargs="?", help="the sender's id (`alp channel list`)")


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
    return "\n".join(lines)


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
