"""`alp completion bash|zsh|fish`: a completion script generated from this parser (shtab).

Wherever a command takes a thread (`alp thread show T`, `alp push T`, `--thread T`,
`alp handoff T --from T` …) the script asks the daemon for names: `alp completion --threads
[WORD]` prints `@last`, then each thread's id and its title when no other thread has it
(newest first, archived ones left out), one a line, those starting with WORD. It never
starts a daemon: with none running there is nothing to offer.
"""

from __future__ import annotations

import sys

from alpctl.invocation import EXIT_OK, Invocation, UsageError

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from alpctl.command_line import Arguments

SHELLS = ["bash", "zsh", "fish"]
#: how many threads completion offers (newest first)
THREADS_OFFERED = 200

_EPILOG = """\
Install it once:
  bash:  alp completion bash > ~/.local/share/bash-completion/completions/alp
  zsh:   alp completion zsh > "${fpath[1]}/_alp"     (a directory on your $fpath)
  fish:  alp completion fish > ~/.config/fish/completions/alp.fish"""


_FUNCTION = "_alp_complete_threads"
_PREAMBLES = {
    # One candidate a line; a title with spaces is escaped as the shell reads it back.
    "bash": f"""
{_FUNCTION}() {{
  local line
  alp completion --threads "$1" 2>/dev/null | while IFS= read -r line; do
    printf '%q\\n' "$line"
  done
}}""",
    "zsh": f"""
{_FUNCTION}() {{
  local -a names
  names=("${{(@f)$(alp completion --threads 2>/dev/null)}}")
  compadd -a names
}}""",
    "fish": "",
}
_COMPLETE = {
    "bash": _FUNCTION,
    "zsh": _FUNCTION,
    "fish": "(alp completion --threads (commandline -ct) 2>/dev/null)",
}


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = _EPILOG
    # One plain positional (no choices): with --threads it is the start of the names wanted.
    # So `alp completion --threads WORD`, run at every Tab, is read without argparse.
    parser.add_argument("shell", nargs="?", help="the shell to complete for: bash, zsh or fish")
    parser.add_argument(
        "--threads",
        action="store_true",
        help="print the names of your threads (starting with the word given), one a line",
    )


def _mark_thread_arguments(parser: argparse.ArgumentParser, complete: dict[str, str]) -> None:
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _mark_thread_arguments(sub, complete)
        elif action.metavar == "THREAD" or action.dest in ("thread", "target"):
            action.complete = complete  # type: ignore[attr-defined]


def script(shell: str) -> str:
    import shtab  # only here: completion scripts are generated, never imported on a call

    from alpctl.parser import build_parser

    parser = build_parser(describe=True)
    _mark_thread_arguments(parser, {shell: _COMPLETE[shell]})
    text: str = shtab.complete(parser, shell=shell, preamble=_PREAMBLES[shell])
    return text


def thread_names(threads: list[dict[str, object]], word: str = "") -> list[str]:
    """`@last`, then each thread's id and its title where no other thread has it."""
    titles = [t.get("title") for t in threads]
    names = ["@last"]
    for thread, title in zip(threads, titles, strict=True):
        names.append(str(thread["id"]))
        if isinstance(title, str) and title and titles.count(title) == 1:
            names.append(title)
    return [name for name in names if name.startswith(word)]


def run(args: Arguments, inv: Invocation) -> int:
    if args.threads:
        from alpctl.client import Client, DaemonUnreachable

        try:
            client = Client.connect(inv.socket_path)
        except DaemonUnreachable:
            return EXIT_OK
        with client:
            listed = client.call("thread/list", {"all": True, "limit": THREADS_OFFERED})
        threads = [t for t in listed["threads"] if t["status"] != "archived"]
        sys.stdout.write("".join(f"{n}\n" for n in thread_names(threads, args.shell or "")))
        return EXIT_OK
    if args.shell not in SHELLS:
        raise UsageError("which shell? alp completion bash|zsh|fish")
    sys.stdout.write(script(args.shell))
    return EXIT_OK
