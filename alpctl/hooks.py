"""Hooks the runtimes call back into: `alp hook session-start`, `alp hook deliver`.

Claude Code runs it (installed per run through `--settings`) when a session starts or, as
we install it, after it compacts: the hook answers with the run's `session-context.md` as
`additionalContext`, so the thread's work state is back in the conversation the moment the
runtime's own summary replaced it. It reads one local file and talks to no daemon: a hook
must be fast and must not fail the runtime.

`deliver` is installed after every tool call (PostToolUse) and on every prompt
(UserPromptSubmit): it asks alpd for the deliveries waiting for the run (`delivery/pending`;
alpd finds the run from this process's ancestry), prints them as `additionalContext` — Claude
Code adds that to its next model request — and then acknowledges them (`delivery/ack`), so
alpd records them injected only once the runtime has them. Nothing waiting, no daemon, not
inside a run: it prints nothing and exits 0; the deliveries wait for the next call or round.
"""

from __future__ import annotations

import json
import os

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO


def run(
    name: str, stdin: IO[str], stdout: IO[str], environ: dict[str, str] | os._Environ[str]
) -> bool:
    """`alp hook NAME`: answer the hook on `stdout`; False for a hook alp does not have."""
    if name == "session-start":
        stdout.write(session_start(stdin, environ))
    elif name == "deliver":
        deliver(stdin, stdout, environ)
    else:
        return False
    return True


def _event(stdin: IO[str]) -> dict[str, object]:
    try:
        event = json.loads(stdin.read() or "{}")
    except ValueError:
        return {}
    return event if isinstance(event, dict) else {}


def deliver(stdin: IO[str], stdout: IO[str], environ: dict[str, str] | os._Environ[str]) -> None:
    """Hand the run what waits for it, as the hook's output; then acknowledge it."""
    name = _event(stdin).get("hook_event_name")
    event = name if name in ("PostToolUse", "UserPromptSubmit") else "PostToolUse"
    path = environ.get("ALP_SOCKET")
    if not path:
        return
    from alpctl.client import Client, DaemonUnreachable, ForeignDaemon, RpcError

    try:
        with Client.connect(path) as client:
            handed = client.call("delivery/pending", {})
            ids = [item["id"] for item in handed.get("deliveries", [])]
            if not ids:
                return
            context = handed["context"]
            output = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}
            stdout.write(json.dumps(output, ensure_ascii=False))
            stdout.flush()
            client.call("delivery/ack", {"ids": ids})
    except (DaemonUnreachable, ForeignDaemon, RpcError, OSError, ValueError, KeyError):
        # The runtime must go on whatever happens here: an unacknowledged hand-out is handed
        # out again when its lease runs out, or delivered by the next round.
        return


def session_start(stdin: IO[str], environ: dict[str, str] | os._Environ[str]) -> str:
    """The hook's stdout: `hookSpecificOutput.additionalContext`, or nothing to add."""
    event = _event(stdin)
    path = environ.get("ALP_SESSION_CONTEXT")
    if not path:
        return ""
    try:
        with open(path, encoding="utf-8") as f:
            context = f.read()
    except OSError:
        return ""
    source = event.get("source")
    header = "The conversation was compacted; the thread's work state follows.\n\n"
    text = (header if source == "compact" else "") + context
    output = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}
    return json.dumps(output, ensure_ascii=False)
