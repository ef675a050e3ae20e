"""`alp import claude|codex`: index the native sessions you had before alp."""

from __future__ import annotations

from alpctl import history_cli, render
from alpctl.invocation import EXIT_OK, Invocation

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from alpctl.command_line import Arguments


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "Imported sessions are legacy-unthreaded executions: searchable with `alp search`, "
        "never part of a thread. Running it again adds only what is new."
    )
    parser.add_argument("runtime", choices=["claude", "codex"], help="whose sessions")
    parser.add_argument(
        "--path", help="directory of sessions (default: ~/.claude/projects, $CODEX_HOME/sessions)"
    )


def run(args: Arguments, inv: Invocation) -> int:
    params = history_cli.import_params(args)
    result = history_cli.call_with_progress(inv.client, args, "history/import", params)
    inv.out.emit(result, render.import_result)
    return EXIT_OK
