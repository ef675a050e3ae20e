"""`alp context pin KIND -- TEXT`: from inside a run, a line of work state for the next root."""

from __future__ import annotations

from alpctl.invocation import EXIT_OK, Invocation, UsageError
from alpctl.parser import actions, add

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from alpctl.command_line import Arguments

KINDS = ["objective", "decision", "constraint", "open-item", "next-action", "resolve"]

_PIN_EPILOG = """\
The text follows `--`, so it may hold any word or dash:
  alp context pin decision -- three tiers, monthly and yearly
  alp context pin open-item -- does checkout need 3-D Secure?
  alp context pin resolve -- OPEN_ITEM_ID     (closes an open item; ids in `alp thread context`)
Run it from inside a run alp started ($ALP_EXECUTION_ID is set there); the pin lands in that
run's checkpoint and in the thread's context when the run settles."""


def configure(parser: argparse.ArgumentParser) -> None:
    pin = add(actions(parser), "pin", "add a line to this run's checkpoint: KIND -- TEXT")
    pin.epilog = _PIN_EPILOG
    pin.usage = "alp context pin {" + ",".join(KINDS) + "} -- TEXT"
    pin.add_argument("kind", choices=KINDS, help="what the line is (resolve: an open item's id)")


def pin_text(kind: str, rest: list[str] | None) -> str:
    text = " ".join(rest or []).strip()
    if not text:
        what = "the open item's id" if kind == "resolve" else "its text"
        raise UsageError(
            f"`alp context pin {kind}` needs {what} after `--`, e.g.\n"
            f"  alp context pin {kind} -- "
            + ("OPEN_ITEM_ID" if kind == "resolve" else "ship the pricing page")
        )
    return text


def run(args: Arguments, inv: Invocation) -> int:
    text = pin_text(args.kind, args.rest)
    result = inv.client.call("context/pin", {"kind": args.kind, "text": text})
    inv.out.emit(result, pinned)
    return EXIT_OK


def pinned(result: dict[str, Any]) -> str:
    line = f"pinned {result['kind']} to {result['executionId']} ({result['pins']} pins)"
    if result.get("matched") is not False:
        return line
    items = result.get("openItems") or []
    listing = "\n".join(f"  {item['id']}  {item['text']}" for item in items)
    return (
        f"{line}\nno open item has the id or text {result['text']!r}; it is kept as an "
        "unmatched resolve. " + (f"Open items:\n{listing}" if items else "There are no open items.")
    )
