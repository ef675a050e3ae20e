"""`alp hook session-start` and `alp hook deliver` answer Claude Code's hook contract;
`alp hook codex-approve` answers Codex's PreToolUse."""

from __future__ import annotations

import io
import json
import socket
import threading
from pathlib import Path

from alpctl.hooks import codex_approve, deliver, session_start


def test_session_start_hook_reinjects_session_context_after_compaction(tmp_path: Path) -> None:
    context = tmp_path / "session-context.md"
    context.write_text("# work state, not authority\n\n- decision: use sqlite\n")
    event = json.dumps({"hook_event_name": "SessionStart", "source": "compact"})
    out = json.loads(session_start(io.StringIO(event), {"ALP_SESSION_CONTEXT": str(context)}))
    hook = out["hookSpecificOutput"]
    assert hook["hookEventName"] == "SessionStart"
    assert "compacted" in hook["additionalContext"]
    assert hook["additionalContext"].endswith(context.read_text())


def test_session_start_hook_is_silent_outside_a_run() -> None:
    assert session_start(io.StringIO("{}"), {}) == ""


def test_session_start_hook_tolerates_garbage_input(tmp_path: Path) -> None:
    context = tmp_path / "c.md"
    context.write_text("x")
    out = session_start(io.StringIO("not json"), {"ALP_SESSION_CONTEXT": str(context)})
    assert json.loads(out)["hookSpecificOutput"]["additionalContext"] == "x"


class FakeDaemon:
    """A JSON-RPC peer on a Unix socket that answers `delivery/pending` and `delivery/ack`,
    and records what the hook had printed when its acknowledgement arrived."""

    def __init__(self, path: Path, deliveries: list[dict[str, object]], out: io.StringIO) -> None:
        self.deliveries = deliveries
        self.out = out
        self.calls: list[tuple[str, dict[str, object], str]] = []
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(1)
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        conn, _ = self.server.accept()
        with conn, conn.makefile("rb") as reader:
            for line in reader:
                request = json.loads(line)
                self.calls.append((request["method"], request["params"], self.out.getvalue()))
                if request["method"] == "delivery/pending":
                    result: dict[str, object] = {
                        "deliveries": self.deliveries,
                        "context": "CONTEXT" if self.deliveries else "",
                    }
                else:
                    result = {"acked": request["params"]["ids"], "missed": []}
                reply = {"jsonrpc": "2.0", "id": request["id"], "result": result}
                conn.sendall(json.dumps(reply).encode() + b"\n")


def test_deliver_prints_the_context_for_the_event_then_acknowledges(tmp_path: Path) -> None:
    out = io.StringIO()
    items = [{"id": 7, "sourceKind": "push", "envelope": "[alp …]", "text": "t", "at": "x"}]
    daemon = FakeDaemon(tmp_path / "s", items, out)
    event = io.StringIO(json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "go"}))
    deliver(event, out, {"ALP_SOCKET": str(tmp_path / "s")})
    hook = json.loads(out.getvalue())["hookSpecificOutput"]
    assert hook == {"hookEventName": "UserPromptSubmit", "additionalContext": "CONTEXT"}
    (pending, _, _), (ack, params, printed) = daemon.calls
    assert (pending, ack, params) == ("delivery/pending", "delivery/ack", {"ids": [7]})
    assert printed == out.getvalue(), "acknowledged only after the runtime has the text"


def test_deliver_with_nothing_waiting_prints_nothing_and_acknowledges_nothing(
    tmp_path: Path,
) -> None:
    out = io.StringIO()
    daemon = FakeDaemon(tmp_path / "s", [], out)
    deliver(io.StringIO("{}"), out, {"ALP_SOCKET": str(tmp_path / "s")})
    assert out.getvalue() == ""
    assert [method for method, _, _ in daemon.calls] == ["delivery/pending"]


def test_deliver_without_a_daemon_or_outside_a_run_prints_nothing(tmp_path: Path) -> None:
    out = io.StringIO()
    deliver(io.StringIO("garbage"), out, {"ALP_SOCKET": str(tmp_path / "nobody-here")})
    deliver(io.StringIO("{}"), out, {})
    assert out.getvalue() == ""


class FakeApprover:
    """A JSON-RPC peer that answers `approval/request` with `decision`, recording the call."""

    def __init__(self, path: Path, result: dict[str, object]) -> None:
        self.result = result
        self.calls: list[tuple[str, dict[str, object]]] = []
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(1)
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        conn, _ = self.server.accept()
        with conn, conn.makefile("rb") as reader:
            for line in reader:
                request = json.loads(line)
                self.calls.append((request["method"], request["params"]))
                reply = {"jsonrpc": "2.0", "id": request["id"], "result": self.result}
                conn.sendall(json.dumps(reply).encode() + b"\n")


CODEX_EVENT = json.dumps({
    "hook_event_name": "PreToolUse", "tool_name": "Bash",
    "tool_input": {"command": "touch x"}, "tool_use_id": "call_1",
})  # fmt: skip


def test_codex_approve_prints_nothing_when_the_person_approved(tmp_path: Path) -> None:
    daemon = FakeApprover(tmp_path / "s", {"decision": "allow", "reason": "approved by t:1"})
    out = codex_approve(io.StringIO(CODEX_EVENT), {"ALP_SOCKET": str(tmp_path / "s")})
    assert out == ""
    params = {"toolName": "Bash", "input": {"command": "touch x"}, "toolUseId": "call_1"}
    assert daemon.calls == [("approval/request", params)]


def test_codex_approve_denies_with_the_reason_the_model_reads(tmp_path: Path) -> None:
    FakeApprover(tmp_path / "s", {"decision": "deny", "reason": "no answer in 300 s: denied"})
    out = codex_approve(io.StringIO(CODEX_EVENT), {"ALP_SOCKET": str(tmp_path / "s")})
    hook = json.loads(out)["hookSpecificOutput"]
    assert hook["hookEventName"] == "PreToolUse" and hook["permissionDecision"] == "deny"
    assert "did not allow Bash: no answer in 300 s" in hook["permissionDecisionReason"]


def test_codex_approve_denies_without_a_daemon_or_outside_a_run(tmp_path: Path) -> None:
    for environ in ({"ALP_SOCKET": str(tmp_path / "nobody-here")}, {}):
        out = codex_approve(io.StringIO("garbage"), environ)
        assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
