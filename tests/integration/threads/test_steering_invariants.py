"""The thread invariants with clears and undos in the mix, on a real alpd (issue 11).

A hypothesis state machine drives one thread through roots that pin and settle (completed,
failed, killed), roots abandoned by their client and settled by reconcile, clears and undos,
and checks after every move, from the client side, what docs/contract.md promises: every
revision re-hashes (RFC 8785) to its digest and links to the one before, every root's binding
names a revision by its current digest, every write is revision + 1, and undo restores what a
reference model says. Then: forged steps in the database are THREAD_CONTEXT_TAMPERED.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from daemons import StartAlpd
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from test_thread_invariants import (
    context,
    db,
    jcs_digest,
    new_thread,
    pin_script,
    rpc_error,
    run_root,
)

from alpd.testing.daemon import DaemonProcess, running_daemon

PINS = st.lists(
    st.tuples(
        st.sampled_from(["objective", "decision", "constraint", "open-item", "next-action"]),
        st.sampled_from(["alpha", "beta", "gamma"]),
    ),
    max_size=2,
)


@pytest.fixture(scope="module")
def d(start_module_alpd: StartAlpd) -> DaemonProcess:
    return start_module_alpd()


def content(snapshot: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in snapshot.items() if k not in {"revision", "previousDigest"}}


def abandon_a_root(d: DaemonProcess, thread_id: str, work: Path) -> str:
    """An interactive root reserved by a client that exits without running it."""
    code = (
        "import json, sys; from alpctl.client import Client; "
        "c = Client.connect(sys.argv[1]); "
        "print(json.dumps(c.call('thread/continue', {'threadId': sys.argv[2], "
        "'runtime': 'command', 'args': ['true'], 'cwd': sys.argv[3]})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(d.socket_path), thread_id, str(work)],
        capture_output=True,
        text=True,
        check=True,
        env=d.env,
    )
    return str(json.loads(out.stdout)["execution"]["id"])


class SteeredThread(RuleBasedStateMachine):
    def __init__(self, d: DaemonProcess, work: Path) -> None:
        super().__init__()
        self.d, self.work = d, work
        self.thread_id = new_thread(d, work)
        #: (root, content of the revision it opened on) since the last clear, not undone
        self.stack: list[tuple[str, dict[str, Any]]] = []
        self.abandoned: str | None = None

    def _opened(self) -> dict[str, Any]:
        return content(context(self.d, self.thread_id)["snapshot"])

    @precondition(lambda self: self.abandoned is None)
    @rule(pins=PINS, ending=st.sampled_from(["exit 0", "exit 3", "kill -KILL $$"]))
    def root(self, pins: list[tuple[str, str]], ending: str) -> None:
        opened = self._opened()
        script = " && ".join(filter(None, [pin_script(*pins), ending]))
        root = run_root(self.d, self.thread_id, script, self.work)
        self.stack.append((root["id"], opened))

    @precondition(lambda self: self.abandoned is None)
    @rule()
    def abandoned_root(self) -> None:
        opened = self._opened()
        self.abandoned = abandon_a_root(self.d, self.thread_id, self.work)
        self.stack.append((self.abandoned, opened))

    @rule()
    def reconcile(self) -> None:
        self.d.call("thread/reconcile", {"threadId": self.thread_id})
        if self.abandoned is not None:
            # settled by this call, or by the daemon's own reconcile tick before it
            shown = self.d.call("execution/show", {"executionId": self.abandoned})
            assert isinstance(shown, dict)
            assert (shown["status"], shown["outcome"]) == ("settled", "interrupted")
            self.abandoned = None

    @rule()
    def clear(self) -> None:
        # a step reconciles first: an abandoned root is settled, then cleared
        self.abandoned = None
        self.d.call("thread/clear", {"threadId": self.thread_id})
        self.stack.clear()

    @rule()
    def undo(self) -> None:
        self.abandoned = None
        if not self.stack:
            error = rpc_error(self.d, "thread/undo", {"threadId": self.thread_id})
            assert error.name == "THREAD_NOTHING_TO_UNDO"
            return
        root_id, opened = self.stack.pop()
        result = self.d.call("thread/undo", {"threadId": self.thread_id})
        assert isinstance(result, dict)
        assert result["step"]["executionId"] == root_id
        assert content(context(self.d, self.thread_id)["snapshot"]) == opened

    @invariant()
    def the_chain_rehashes_from_genesis_and_every_binding_names_it(self) -> None:
        head = context(self.d, self.thread_id)
        previous = None
        digests = {}
        for revision in range(head["revision"] + 1):
            snap = context(self.d, self.thread_id, revision)
            assert jcs_digest(snap["snapshot"]) == snap["digest"]
            assert snap["snapshot"]["previousDigest"] == previous
            previous = digests[revision] = snap["digest"]
        shown = self.d.call("thread/show", {"threadId": self.thread_id})
        assert isinstance(shown, dict)
        for root in shown["roots"]:
            execution = self.d.call("execution/show", {"executionId": root["id"]})
            assert isinstance(execution, dict)
            binding = execution["policy"]["binding"]
            assert jcs_digest(execution["policy"]) == execution["policyHash"]
            assert binding["contextDigest"] == digests[binding["contextRevision"]]

    @invariant()
    def every_write_is_the_next_revision(self) -> None:
        with db(self.d) as conn:
            revisions = [
                row[0]
                for row in conn.execute(
                    "SELECT revision FROM thread_revisions WHERE thread_id = ? ORDER BY revision",
                    (self.thread_id,),
                )
            ]
        assert revisions == list(range(1, len(revisions) + 1))


def test_clear_and_undo_interleaved_with_roots_and_reconcile_keep_every_invariant(
    d: DaemonProcess, work: Path
) -> None:
    run_state_machine_as_test(
        lambda: SteeredThread(d, work),
        settings=settings(
            max_examples=4,
            stateful_step_count=8,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        ),
    )


# forged steps


def _stepped_thread(d: DaemonProcess, work: Path) -> str:
    thread_id = new_thread(d, work)
    for text in ("one", "two", "three"):
        run_root(d, thread_id, pin_script(("decision", text)), work)
    d.call("thread/undo", {"threadId": thread_id})
    d.call("thread/clear", {"threadId": thread_id})
    return thread_id


def _assert_tampered(d: DaemonProcess, thread_id: str, work: Path) -> None:
    launch = {"runtime": "command", "headless": True, "args": ["true"], "cwd": str(work)}
    for method, extra in (
        ("thread/context", {}),
        ("thread/show", {}),
        ("thread/continue", launch),
        ("thread/clear", {}),
        ("thread/undo", {}),
    ):
        error = rpc_error(d, method, {"threadId": thread_id, **extra})
        assert error.name == "THREAD_CONTEXT_TAMPERED", (method, error.name, error.message)
        assert error.data["threadId"] == thread_id


def _forge(conn: Any, thread_id: str, how: str) -> None:
    conn.execute("DROP TRIGGER context_steps_no_update")
    conn.execute("DROP TRIGGER context_steps_no_delete")
    conn.execute("DROP TRIGGER snapshots_no_update")
    where = (thread_id,)
    if how == "delete-undo-row":
        conn.execute("DELETE FROM context_steps WHERE thread_id = ? AND kind = 'undo'", where)
    elif how == "undo-made-a-clear":
        conn.execute(
            "UPDATE context_steps SET kind = 'clear', execution_id = NULL, "
            "restored_revision = NULL WHERE thread_id = ? AND kind = 'undo'",
            where,
        )
    elif how == "undo-of-another-root":
        conn.execute(
            "UPDATE context_steps SET execution_id = (SELECT id FROM executions "
            "WHERE thread_id = ?1 AND sequence = 1), restored_revision = 0 "
            "WHERE thread_id = ?1 AND kind = 'undo'",
            where,
        )
    else:  # the clear's snapshot given content, its digest recomputed (it is the head)
        row = conn.execute(
            "SELECT revision, body FROM snapshots WHERE thread_id = ? ORDER BY revision DESC",
            where,
        ).fetchone()
        snapshot = json.loads(row[1])
        snapshot["decisions"] = [
            {"id": "ln_000000000000", "text": "forged", "sourceExecutionId": "x", "at": "t"}
        ]
        body = rfc8785.dumps(snapshot)
        conn.execute(
            "UPDATE snapshots SET body = ?, digest = ? WHERE thread_id = ? AND revision = ?",
            (body, jcs_digest(snapshot), thread_id, row[0]),
        )


@pytest.mark.parametrize(
    "how", ["delete-undo-row", "undo-made-a-clear", "undo-of-another-root", "clear-given-content"]
)
def test_a_forged_step_is_thread_context_tampered(tmp_path: Path, work: Path, how: str) -> None:
    with running_daemon(tmp_path) as d:
        thread_id = _stepped_thread(d, work)
        with db(d) as conn:
            _forge(conn, thread_id, how)
        _assert_tampered(d, thread_id, work)
