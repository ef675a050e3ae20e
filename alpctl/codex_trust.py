"""`alp channel trust-codex`: the person's one step that lets a headless Codex run ask them on
a chat (`[runtimes.codex] approvals = "chat"`, docs/channels.md "Codex").

Codex runs a hook only once the person trusted its exact definition. This asks Codex itself,
through its app-server (`codex app-server`, JSON-RPC over stdio, the way Codex's own `/hooks`
screen works): `hooks/list` with alp's hook passed as alp passes it to a run, which reports
the hook's key, its `currentHash` and its trust; then, if it is not trusted yet,
`config/batchWrite` records `hooks.state.<key>.trusted_hash` in the user's Codex config, and
`hooks/list` again must say `trusted`. alp never computes the hash: it hands back what Codex
reported, and refuses when that is not the hash this alp was built against (the definition
would not be the one alp passes). Only alp's own hook is trusted: nothing else in the
person's or a repository's Codex config changes.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import threading
import time

from protocol.codex_approvals import HOOK_HASH, HOOK_KEY, HOOK_OVERRIDE

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: how long Codex's app-server may take to answer one request
ANSWER_SECONDS = 30.0


class TrustFailed(Exception):
    """Codex could not be asked, or would not trust alp's hook; the message says what to do."""


class _AppServer:
    def __init__(self, program: str) -> None:
        argv = [program, "app-server", "-c", HOOK_OVERRIDE, "-c", "analytics.enabled=false"]
        try:
            self.process = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, text=True,
            )  # fmt: skip
        except OSError as exc:
            raise TrustFailed(f"could not start {program} app-server: {exc}") from exc
        self.lines: queue.Queue[str] = queue.Queue(maxsize=1024)
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put("")

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        self.process.stdin.flush()

    def call(self, method: str, params: dict[str, Any]) -> Any:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        deadline = time.monotonic() + ANSWER_SECONDS
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise TrustFailed(f"Codex's app-server did not answer {method} in time") from None
            if not line:
                raise TrustFailed(f"Codex's app-server stopped before answering {method}")
            try:
                reply = json.loads(line)
            except ValueError:
                continue
            if reply.get("id") != self.next_id:
                continue  # a notification
            if "error" in reply:
                error = reply["error"].get("message", reply["error"])
                raise TrustFailed(f"Codex refused {method}: {error}")
            return reply.get("result")

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _alp_hook(server: _AppServer) -> dict[str, Any]:
    listed = server.call("hooks/list", {"cwds": [os.getcwd()]})
    for entry in listed.get("data", []):
        for hook in entry.get("hooks", []):
            if hook.get("key") == HOOK_KEY:
                return dict(hook)
    raise TrustFailed(
        "Codex did not list alp's hook (hooks/list); this Codex may not support command "
        "hooks (codex-cli 0.169 does)"
    )


def trust(program: str | None) -> dict[str, Any]:
    """Trust alp's hook in the user's Codex config; what Codex reported."""
    found = shutil.which(program or "codex")
    if found is None:
        raise TrustFailed(
            f"{program or 'codex'!r} was not found on PATH; pass --codex PROGRAM (the command "
            "of [runtimes.codex])"
        )
    server = _AppServer(found)
    try:
        server.call("initialize", {"clientInfo": {"name": "alp", "version": "1"}})
        server.send({"method": "initialized"})
        hook = _alp_hook(server)
        if hook.get("currentHash") != HOOK_HASH:
            raise TrustFailed(
                f"this Codex hashes alp's hook as {hook.get('currentHash')}, not {HOOK_HASH} as "
                "the Codex alp was built against (codex-cli 0.169): the trust would not hold "
                "for the hook alp passes; nothing was written"
            )
        was = hook.get("trustStatus")
        path = None
        if was != "trusted":
            state = {HOOK_KEY: {"trusted_hash": hook["currentHash"]}}
            edit = {"keyPath": "hooks.state", "mergeStrategy": "upsert", "value": state}
            written = server.call("config/batchWrite", {"edits": [edit]})
            path = written.get("filePath") if isinstance(written, dict) else None
            hook = _alp_hook(server)
            if hook.get("trustStatus") != "trusted":
                raise TrustFailed(
                    f"Codex still reports alp's hook as {hook.get('trustStatus')} after the write"
                )
    finally:
        server.close()
    return {
        "key": HOOK_KEY,
        "command": hook.get("command"),
        "matcher": hook.get("matcher"),
        "hash": hook["currentHash"],
        "was": was,
        "trusted": True,
        "configPath": path,
    }


def rendered(result: dict[str, Any]) -> str:
    where = f" (written to {result['configPath']})" if result.get("configPath") else ""
    head = (
        "Codex already trusts alp's approval hook"
        if result["was"] == "trusted"
        else f"Codex now trusts alp's approval hook{where}"
    )
    return (
        f"{head}:\n"
        f"  PreToolUse {result['matcher']}: {result['command']}\n"
        f"  {result['hash']}\n"
        'With [runtimes.codex] approvals = "chat", each shell command of a headless Codex run '
        "now waits for Approve / Deny on a paired chat (no answer by [channels] "
        "approval_timeout: denied)."
    )
