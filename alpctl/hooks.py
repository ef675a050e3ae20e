"""Hooks the runtimes call back into: `alp hook session-start`, `alp hook deliver`,
`alp hook codex-approve`.

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

`codex-approve` is Codex's PreToolUse hook of a headless run whose runtime has `approvals =
"chat"` (protocol/codex_approvals.py): it asks the person on a paired chat
(`approval/request`) whether the shell command may run, and waits. Approve: it prints
nothing (Codex runs the command). Anything else — Deny, no answer by the timeout, no chat,
no daemon, not a run — is a deny Codex reads as the command's result ("Command blocked by
PreToolUse hook: …"), with the reason the model can tell the person.
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
    elif name == "codex-approve":
        stdout.write(codex_approve(stdin, environ))
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


def codex_approve(stdin: IO[str], environ: dict[str, str] | os._Environ[str]) -> str:
    """Nothing when the person approved; else Codex's PreToolUse deny, with the reason."""
    event = _event(stdin)
    tool = event.get("tool_name")
    tool_name = tool if isinstance(tool, str) and tool else "Bash"
    tool_input = event.get("tool_input")
    params: dict[str, object] = {
        "toolName": tool_name,
        "input": tool_input if isinstance(tool_input, dict) else {"command": str(tool_input)},
    }
    if isinstance(event.get("tool_use_id"), str):
        params["toolUseId"] = event["tool_use_id"]
    path = environ.get("ALP_SOCKET")
    if not path:
        return _codex_deny(f"{tool_name} was not run: this is not an alp run")
    from alpctl.client import Client, DaemonUnreachable, ForeignDaemon, RpcError

    try:
        with Client.connect(path) as client:
            result = client.call("approval/request", params)
    except RpcError as exc:
        return _codex_deny(
            f"{tool_name} was not run: alp could not ask ({exc.name}: {exc.message})"
        )
    except (DaemonUnreachable, ForeignDaemon, OSError, ValueError) as exc:
        return _codex_deny(f"{tool_name} was not run: alpd is not reachable ({exc})")
    if isinstance(result, dict) and result.get("decision") == "allow":
        return ""
    reason = result.get("reason") if isinstance(result, dict) else None
    return _codex_deny(
        f"The person did not allow {tool_name}: {reason or 'denied'}. Do not retry it; say "
        "what you would have done instead"  # Codex adds ". Command: …"
    )


def _codex_deny(reason: str) -> str:
    output = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }
    return json.dumps(output, ensure_ascii=False)


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
