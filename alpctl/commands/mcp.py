"""`alp mcp`: serve alp's tools to the agent inside a run over MCP (stdio).

alpd registers it in every claude and codex run it launches; see alpctl.mcp_server.
"""

from __future__ import annotations

from alpctl.invocation import EXIT_OK, Invocation

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from alpctl.command_line import Arguments

_EPILOG = """\
Runs until its client closes stdin. alp registers it in the runs it launches; by hand:
  Claude Code:  --mcp-config '{"mcpServers":{"alp":{"command":"alp","args":["mcp"]}}}'
  Codex CLI:    -c mcp_servers.alp.command='"alp"' -c mcp_servers.alp.args='["mcp"]'"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = _EPILOG


def run(args: Arguments, inv: Invocation) -> int:
    from alpctl.mcp_server import serve  # the tools and the protocol only for `alp mcp`

    serve(inv.socket_path)
    return EXIT_OK
