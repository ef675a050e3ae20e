"""`alp web`: turn on the daemon's web page (if it is off) and print a one-time login URL."""

from __future__ import annotations

from alpctl.invocation import EXIT_OK, Invocation

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from alpctl.command_line import Arguments

_EPILOG = """\
The page is served by alpd itself on a loopback address of its own only, and stays on until
the daemon stops
(`[web] enabled = true` in config.toml, or `alpd --web`, turns it on from start; `[web]
port = N` fixes its port). Open the login URL once in your browser: it sets the page's
cookie and cannot be used again; run `alp web` for a new one (a new browser, a restarted
daemon). Everything the page does goes through the daemon's own checks, as you."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = _EPILOG


def opened(result: dict[str, Any]) -> str:
    state = "started" if result["started"] else "already on"
    return "\n".join(
        [
            f"web page {state}: {result['url']}",
            f"log in (once, in your browser): {result['loginUrl']}",
        ]
    )


def run(args: Arguments, inv: Invocation) -> int:
    inv.out.emit(inv.client.call("web/open", {}), opened)
    return EXIT_OK
