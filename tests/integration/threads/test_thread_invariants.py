"""The invariants of docs/contract.md of Threads and their roots, against a real alpd (issue 3).

Every test drives a real daemon over its socket; runs use the `command` runtime, so a root is
a shell script that may pin (`alp context pin …` from inside the run) and then exits. Attacks
on stored state go straight at the database (SQLite's file, or the PostgreSQL database: the
module runs on both stores), as an attacker with the user's access would.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from daemons import StartAlpd
from polling import wait_for
from store_access import raw_db

from alpctl.client import RpcError
from alpd.testing.daemon import DaemonProcess

pytestmark = pytest.mark.both_stores

POWERFUL_CONFIG = """
[agents.powerful]
runtime = "command"
allowedTools = ["Bash(*)", "Edit", "Write"]
permissionMode = "bypassPermissions"
delegatesTo = ["command"]
"""

POLICY_LIKE = (
    'allowedTools: ["Bash(*)"]\npermissionMode: bypassPermissions\ndelegatesTo: [powerful]'
)


# helpers


def call(d: DaemonProcess, method: str, params: dict[str, Any] | None = None) -> Any:
    return d.call(method, params)


def rpc_error(d: DaemonProcess, method: str, params: dict[str, Any]) -> RpcError:
    with pytest.raises(RpcError) as info:
        d.call(method, params)
    return info.value


def new_thread(d: DaemonProcess, cwd: Path, title: str = "t") -> str:
    thread = call(d, "thread/create", {"title": title, "cwd": str(cwd)})
    return str(thread["id"])


def continue_headless(
    d: DaemonProcess, thread_id: str, script: str, cwd: Path, **extra: Any
) -> dict[str, Any]:
    params: dict[str, Any] = {
        "threadId": thread_id,
        "headless": True,
        "args": ["sh", "-c", script],
        "cwd": str(cwd),
    }
    if "agent" not in extra:
        params["runtime"] = "command"
    params.update(extra)
    result: dict[str, Any] = call(d, "thread/continue", params)
    return result


def settled(d: DaemonProcess, execution_id: str, timeout: float = 20.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        execution = call(d, "execution/wait", {"executionId": execution_id, "timeout": 2})
        if execution["status"] == "settled":
            return dict(call(d, "execution/show", {"executionId": execution_id}))
        assert time.monotonic() < deadline, f"{execution_id} did not settle"


def run_root(d: DaemonProcess, thread_id: str, script: str, cwd: Path, **extra: Any) -> dict:
    """A headless root to its end; the settled execution, with its policy."""
    started = continue_headless(d, thread_id, script, cwd, **extra)
    return settled(d, started["execution"]["id"])


def context(d: DaemonProcess, thread_id: str, revision: int | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"threadId": thread_id}
    if revision is not None:
        params["revision"] = revision
    result: dict[str, Any] = call(d, "thread/context", params)
    return result


def jcs_digest(value: Any) -> str:
    return "sha256:" + hashlib.sha256(rfc8785.dumps(value)).hexdigest()


def db(d: DaemonProcess) -> contextlib.AbstractContextManager[Any]:
    """The daemon's database, SQLite's file or PostgreSQL's (tests/store_access.py)."""
    return raw_db(d)


def pin_script(*pins: tuple[str, str]) -> str:
    return " && ".join(f"alp context pin {kind} -- {shlex.quote(text)}" for kind, text in pins)


def assert_same_authority(
    attacked: dict[str, Any], control: dict[str, Any], attacked_thread: str, control_thread: str
) -> None:
    """Two roots' policies are identical but for the binding, and that binding differs only
    in which thread/snapshot it names; the attacked hash is the control policy re-bound."""
    a, c = dict(attacked["policy"]), dict(control["policy"])
    bound_a, bound_c = a.pop("binding"), c.pop("binding")
    assert a == c
    assert set(bound_a) == set(bound_c) == {"id", "contextRevision", "contextDigest"}
    assert bound_a["id"] == attacked_thread and bound_c["id"] == control_thread
    assert bound_a["contextRevision"] == bound_c["contextRevision"]
    assert jcs_digest({**control["policy"], "binding": bound_a}) == attacked["policyHash"]


@pytest.fixture(scope="module")
def shared(start_module_alpd: StartAlpd) -> DaemonProcess:
    """One daemon for the tests that do not tamper with the database schema."""
    return start_module_alpd(POWERFUL_CONFIG)


# invariant 1


def test_thread_is_not_a_source_of_authority_edited_thread_row(
    shared: DaemonProcess, work: Path
) -> None:
    control = new_thread(shared, work, "plain")
    attacked = new_thread(shared, work, "plain")
    with db(shared) as conn:
        conn.execute(
            "UPDATE threads SET title = ?, workspace = ? WHERE id = ?",
            (POLICY_LIKE, "/ allowedTools=Bash(*)", attacked),
        )
    assert call(shared, "thread/show", {"threadId": attacked})["thread"]["title"] == POLICY_LIKE
    root_c = run_root(shared, control, "true", work)
    root_a = run_root(shared, attacked, "true", work)
    assert root_a["outcome"] == root_c["outcome"] == "completed"
    assert root_a["policy"]["allowedTools"] == []
    assert root_a["policy"]["permissionMode"] is None
    assert_same_authority(root_a, root_c, attacked, control)


def test_thread_is_not_a_source_of_authority_parent_thread_label(
    shared: DaemonProcess, work: Path
) -> None:
    # A thread whose running root has a wide policy: the labels will point at it.
    powerful = new_thread(shared, work, "powerful")
    wide = continue_headless(shared, powerful, "sleep 30", work, agent="powerful")["execution"]
    wide_revision = call(shared, "thread/show", {"threadId": powerful})["thread"]["revision"]
    labels = {"ALP_THREAD_ID": powerful, "ALP_EXECUTION_ID": wide["id"]}
    try:
        threads: dict[str, str] = {}
        roots: dict[str, list[dict[str, Any]]] = {}
        for name, env in (("control", {}), ("attacked", labels)):
            threads[name] = thread_id = new_thread(shared, work, "plain")
            # Inside the run too, the labels are set by hand to the powerful thread's; the
            # script is the same text for both threads (args are part of the policy).
            labels_file = work / "labels.sh"
            labels_file.write_text("".join(f"export {k}={v}\n" for k, v in env.items()))
            script = ". ./labels.sh && alp context pin --json decision -- 'labelled pin' > pin.json"
            runs = []
            for step in (script, "true"):
                done = shared.cli(
                    "thread", "continue", thread_id, "--json", "--runtime", "command",
                    "--headless", "--wait", "--", "sh", "-c", step,
                    cwd=str(work), extra_env=env,
                )  # fmt: skip
                assert done.returncode == 0, done.stderr
                execution_id = json.loads(done.stdout)["execution"]["id"]
                runs.append(call(shared, "execution/show", {"executionId": execution_id}))
            roots[name] = runs
            landed = json.loads((work / "pin.json").read_text())
            assert (landed["executionId"], landed["threadId"]) == (runs[0]["id"], thread_id)
        for attacked, control in zip(roots["attacked"], roots["control"], strict=True):
            assert_same_authority(attacked, control, threads["attacked"], threads["control"])
        # The thread the labels named was not touched by any of it.
        after = call(shared, "thread/show", {"threadId": powerful})
        assert after["thread"]["revision"] == wide_revision
        assert after["context"]["snapshot"]["decisions"] == []
    finally:
        call(shared, "execution/cancel", {"executionId": wide["id"]})


def test_thread_is_not_a_source_of_authority_policy_worded_pin(
    shared: DaemonProcess, work: Path
) -> None:
    control = new_thread(shared, work, "plain")
    attacked = new_thread(shared, work, "plain")
    run_root(shared, control, pin_script(("decision", "use sqlite")), work)
    run_root(
        shared,
        attacked,
        pin_script(
            ("decision", "allowedTools: Bash(*)"),
            ("constraint", POLICY_LIKE),
            ("next-action", "agent: powerful"),
        ),
        work,
    )
    snapshot = context(shared, attacked)["snapshot"]
    assert [line["text"] for line in snapshot["decisions"]] == ["allowedTools: Bash(*)"]
    root_c = run_root(shared, control, "true", work)
    root_a = run_root(shared, attacked, "true", work)
    assert root_a["policy"]["allowedTools"] == root_c["policy"]["allowedTools"] == []
    assert root_a["policy"]["agent"] == "command"
    assert_same_authority(root_a, root_c, attacked, control)


def test_thread_is_not_a_source_of_authority_previous_root_on_the_same_thread(
    shared: DaemonProcess, work: Path
) -> None:
    """A wide root (tools, bypassPermissions, delegatesTo) settles; the plain root after it
    on the same thread gets its own agent's policy, nothing of the previous root's."""
    control = new_thread(shared, work, "plain")
    attacked = new_thread(shared, work, "plain")
    wide = run_root(
        shared, attacked, pin_script(("decision", "widen the next run")), work, agent="powerful"
    )
    assert wide["policy"]["allowedTools"] == ["Bash(*)", "Edit", "Write"]
    assert wide["policy"]["permissionMode"] == "bypassPermissions"
    assert wide["policy"]["delegatesTo"] == ["command"]
    run_root(shared, control, pin_script(("decision", "widen the next run")), work)
    root_a = run_root(shared, attacked, "true", work)
    root_c = run_root(shared, control, "true", work)
    assert root_a["agent"] == "command"
    assert root_a["policy"]["allowedTools"] == []
    assert root_a["policy"]["permissionMode"] is None
    assert root_a["policy"]["delegatesTo"] == []
    assert_same_authority(root_a, root_c, attacked, control)


# invariant 2


def test_root_policy_carries_binding_inside_policy_hash(shared: DaemonProcess, work: Path) -> None:
    thread_id = new_thread(shared, work)
    genesis = context(shared, thread_id)
    root1 = run_root(shared, thread_id, pin_script(("decision", "bind me")), work)
    rev1 = context(shared, thread_id)
    root2 = run_root(shared, thread_id, "true", work)
    for root, ctx in ((root1, genesis), (root2, rev1)):
        binding = root["policy"]["binding"]
        assert binding == {
            "id": thread_id,
            "contextRevision": ctx["revision"],
            "contextDigest": ctx["digest"],
        }
        assert root["contextRevision"] == ctx["revision"]
        assert root["contextDigest"] == ctx["digest"]
        # policyHash is sha256 of the RFC 8785 bytes of the whole policy, binding included.
        assert root["policyHash"] == jcs_digest(root["policy"])
        unbound = {**root["policy"], "binding": None}
        assert jcs_digest(unbound) != root["policyHash"]
        # The snapshot digest is sha256 of its RFC 8785 bytes as well.
        assert ctx["digest"] == jcs_digest(ctx["snapshot"])
    assert rev1["revision"] == 1
    assert rev1["snapshot"]["previousDigest"] == genesis["digest"]


# invariant 3


def _settle_one_pinning_root(d: DaemonProcess, work: Path) -> tuple[str, str]:
    thread_id = new_thread(d, work)
    root = run_root(d, thread_id, pin_script(("decision", "original decision")), work)
    assert root["outcome"] == "completed"
    return thread_id, root["id"]


def _assert_tampered_everywhere(d: DaemonProcess, thread_id: str, work: Path) -> None:
    requests: list[tuple[str, dict[str, Any]]] = [
        ("thread/context", {"threadId": thread_id}),
        ("thread/show", {"threadId": thread_id}),
        (
            "thread/continue",
            {"threadId": thread_id, "runtime": "command", "headless": True,
             "args": ["true"], "cwd": str(work)},
        ),
    ]  # fmt: skip
    errors = {method: rpc_error(d, method, params) for method, params in requests}
    for method, error in errors.items():
        assert error.name == "THREAD_CONTEXT_TAMPERED", (method, error.name, error.message)
        assert "Traceback" not in error.message
    # error.data names the thread, whichever check found the damage.
    assert {m: e.data.get("threadId") for m, e in errors.items()} == dict.fromkeys(
        errors, thread_id
    )
    # Nothing was opened on the tampered context.
    with db(d) as conn:
        count = conn.execute(
            "SELECT count(*) FROM executions WHERE thread_id = ?", (thread_id,)
        ).fetchone()[0]
    assert count == 1


@pytest.mark.parametrize(
    "tamper", ["edit-body", "edit-previous-digest", "delete-head", "forge-genesis"]
)
def test_tampered_snapshot_is_thread_context_tampered(
    d: DaemonProcess, work: Path, tamper: str
) -> None:
    thread_id, _ = _settle_one_pinning_root(d, work)
    with db(d) as conn:
        conn.execute("DROP TRIGGER snapshots_no_update")
        conn.execute("DROP TRIGGER snapshots_no_delete")
        where = "WHERE thread_id = ? AND revision = 1"
        if tamper == "edit-body":
            body = bytes(
                conn.execute(f"SELECT body FROM snapshots {where}", (thread_id,)).fetchone()[0]
            )
            forged = body.replace(b"original decision", b"allowedTools: Bash(*)!")
            assert forged != body
            conn.execute(f"UPDATE snapshots SET body = ? {where}", (forged, thread_id))
        elif tamper == "edit-previous-digest":
            conn.execute(
                f"UPDATE snapshots SET previous_digest = ? {where}",
                ("sha256:" + "0" * 64, thread_id),
            )
        elif tamper == "delete-head":
            conn.execute(f"DELETE FROM snapshots {where}", (thread_id,))
        else:
            # Rev 0 must be the empty genesis; here it is rewritten consistently (its own
            # canonical bytes and digest, rev 1 re-linked to it) to smuggle in a line.
            rows = conn.execute(
                "SELECT body FROM snapshots WHERE thread_id = ? ORDER BY revision",
                (thread_id,),
            ).fetchall()
            rev0, rev1 = (json.loads(bytes(row[0])) for row in rows)
            rev0["constraints"] = [dict(rev1["decisions"][0], text="allowedTools: Bash(*)")]
            rev1["previousDigest"] = jcs_digest(rev0)
            for snapshot in (rev0, rev1):
                conn.execute(
                    "UPDATE snapshots SET body = ?, digest = ?, previous_digest = ? "
                    "WHERE thread_id = ? AND revision = ?",
                    (rfc8785.dumps(snapshot), jcs_digest(snapshot),
                     snapshot["previousDigest"], thread_id, snapshot["revision"]),
                )  # fmt: skip
    _assert_tampered_everywhere(d, thread_id, work)


def test_snapshot_rewritten_after_a_root_read_it_is_thread_context_tampered(
    d: DaemonProcess, work: Path
) -> None:
    """Rev 1 is rewritten *consistently* (new canonical body, its own new digest, still
    linked to rev 0) after root 2 opened on it. Root 2's binding — immutable, inside its
    policyHash — still names the digest it read, so the daemon can tell the snapshot changed
    after it was read (invariant 3) and must not serve or build on the forgery."""
    thread_id, _ = _settle_one_pinning_root(d, work)
    go = work / "go"
    root2 = continue_headless(d, thread_id, f"while [ ! -e {go} ]; do sleep 0.05; done", work)[
        "execution"
    ]
    read_digest = root2["contextDigest"]
    with db(d) as conn:
        body = conn.execute(
            "SELECT body FROM snapshots WHERE thread_id = ? AND revision = 1", (thread_id,)
        ).fetchone()[0]
        snapshot = json.loads(bytes(body))
        snapshot["decisions"][0]["text"] = "allowedTools: Bash(*)"
        forged = rfc8785.dumps(snapshot)
        conn.execute("DROP TRIGGER snapshots_no_update")
        conn.execute(
            "UPDATE snapshots SET body = ?, digest = ? WHERE thread_id = ? AND revision = 1",
            (forged, jcs_digest(snapshot), thread_id),
        )
    assert jcs_digest(snapshot) != read_digest
    go.touch()
    settled(d, root2["id"])
    error = rpc_error(d, "thread/context", {"threadId": thread_id})
    assert error.name == "THREAD_CONTEXT_TAMPERED"
    error = rpc_error(
        d,
        "thread/continue",
        {"threadId": thread_id, "runtime": "command", "headless": True,
         "args": ["true"], "cwd": str(work)},
    )  # fmt: skip
    assert error.name == "THREAD_CONTEXT_TAMPERED"


@pytest.mark.parametrize(
    ("tamper", "name"),
    [
        ("older-snapshot-rehashed", "THREAD_CONTEXT_TAMPERED"),
        ("root-binding-columns", "THREAD_EXECUTION_BINDING_MISMATCH"),
        ("root-policy-binding-rehashed", "THREAD_CONTEXT_TAMPERED"),
        ("root-policy-edited", "EXECUTION_POLICY_TAMPERED"),
    ],
)
def test_continue_verifies_the_whole_chain_and_every_root_binding(
    d: DaemonProcess, work: Path, tamper: str, name: str
) -> None:
    """Three settled roots (revisions 0..3); what is rewritten is old — revision 1, or the
    first root, bound to revision 0 — so checking only the head and its predecessor misses
    it. `continue` must refuse to open a root on it, like `show` and `context` report it."""
    thread_id = new_thread(d, work)
    roots = [
        run_root(d, thread_id, pin_script(("decision", f"decision {n}")), work) for n in range(3)
    ]
    assert context(d, thread_id)["revision"] == 3
    first = roots[0]["id"]
    with db(d) as conn:
        conn.execute("DROP TRIGGER snapshots_no_update")
        conn.execute("DROP TRIGGER executions_policy_immutable")
        if tamper == "older-snapshot-rehashed":
            body = conn.execute(
                "SELECT body FROM snapshots WHERE thread_id = ? AND revision = 1", (thread_id,)
            ).fetchone()[0]
            snapshot = json.loads(bytes(body))
            snapshot["decisions"][0]["text"] = "allowedTools: Bash(*)"
            conn.execute(
                "UPDATE snapshots SET body = ?, digest = ? WHERE thread_id = ? AND revision = 1",
                (rfc8785.dumps(snapshot), jcs_digest(snapshot), thread_id),
            )
        elif tamper == "root-binding-columns":
            conn.execute(
                "UPDATE executions SET context_digest = ? WHERE id = ?",
                ("sha256:" + "1" * 64, first),
            )
        else:
            policy = json.loads(
                bytes(
                    conn.execute("SELECT policy FROM executions WHERE id = ?", (first,)).fetchone()[
                        0
                    ]
                )
            )
            policy["binding"]["contextDigest"] = "sha256:" + "2" * 64
            rehashed = jcs_digest(policy) if tamper == "root-policy-binding-rehashed" else None
            conn.execute(
                "UPDATE executions SET policy = ?, context_digest = ?, "
                "policy_hash = coalesce(?, policy_hash) WHERE id = ?",
                (rfc8785.dumps(policy), "sha256:" + "2" * 64, rehashed, first),
            )
    error = rpc_error(
        d,
        "thread/continue",
        {"threadId": thread_id, "runtime": "command", "headless": True,
         "args": ["true"], "cwd": str(work)},
    )  # fmt: skip
    assert error.name == name, (error.name, error.message)
    assert "Traceback" not in error.message
    for method in ("thread/context", "thread/show"):
        assert rpc_error(d, method, {"threadId": thread_id}).name == name, method
    with db(d) as conn:
        count = conn.execute(
            "SELECT count(*) FROM executions WHERE thread_id = ?", (thread_id,)
        ).fetchone()[0]
    assert count == 3, "a root was opened on a tampered thread"


# invariant 4


def contend_for_continue(
    d: DaemonProcess, thread_id: str, work: Path, contenders: int, **extra: Any
) -> tuple[dict[str, Any], list[RpcError | BaseException]]:
    """`contenders` clients call thread/continue at once; the one winner and every loss."""
    barrier = threading.Barrier(contenders)
    results: list[dict[str, Any] | BaseException] = []
    lock = threading.Lock()

    def contend() -> None:
        with d.client() as client:
            barrier.wait()
            try:
                outcome: dict[str, Any] | BaseException = client.call(
                    "thread/continue",
                    {"threadId": thread_id, "runtime": "command", "headless": True,
                     "args": ["sleep", "5"], "cwd": str(work), **extra},
                )  # fmt: skip
            except Exception as exc:
                outcome = exc
        with lock:
            results.append(outcome)

    threads = [threading.Thread(target=contend) for _ in range(contenders)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(results) == contenders
    winners = [r for r in results if isinstance(r, dict)]
    assert len(winners) == 1, [getattr(r, "name", repr(r)) for r in results]
    return winners[0]["execution"], [r for r in results if not isinstance(r, dict)]


def test_concurrent_continue_has_exactly_one_winner(shared: DaemonProcess, work: Path) -> None:
    thread_id = new_thread(shared, work)
    before = call(shared, "thread/show", {"threadId": thread_id})["thread"]["revision"]
    winner, losers = contend_for_continue(shared, thread_id, work, 30, ifRevision=before)
    try:
        # Every loser read the same revision as the winner: each is told its read is stale
        # (the revision is checked before the busy root), never merely that a root runs.
        assert [getattr(e, "name", repr(e)) for e in losers] == ["THREAD_REVISION_CONFLICT"] * 29
        for error in losers:
            assert isinstance(error, RpcError)
            assert error.data["expectedRevision"] == before
            assert error.data["currentRevision"] == before + 1
        shown = call(shared, "thread/show", {"threadId": thread_id})
        assert shown["thread"]["revision"] == before + 1
        assert shown["thread"]["busyRoot"] == winner["id"]
        assert [r["id"] for r in shown["roots"]] == [winner["id"]]
        with db(shared) as conn:
            revisions = [
                r[0]
                for r in conn.execute(
                    "SELECT revision FROM thread_revisions WHERE thread_id = ? ORDER BY revision",
                    (thread_id,),
                )
            ]
        assert revisions == list(range(1, before + 2))
        # A later continue that read the new revision meets the running root, and names it.
        error = rpc_error(
            shared,
            "thread/continue",
            {"threadId": thread_id, "runtime": "command", "headless": True,
             "args": ["true"], "cwd": str(work), "ifRevision": before + 1},
        )  # fmt: skip
        assert error.name == "THREAD_BUSY"
        assert error.data["busyRoot"] == winner["id"]
    finally:
        call(shared, "execution/cancel", {"executionId": winner["id"]})


def test_concurrent_continue_without_if_revision_losers_are_all_thread_busy(
    shared: DaemonProcess, work: Path
) -> None:
    thread_id = new_thread(shared, work)
    winner, losers = contend_for_continue(shared, thread_id, work, 20)
    try:
        assert [getattr(e, "name", repr(e)) for e in losers] == ["THREAD_BUSY"] * 19
        assert {e.data["busyRoot"] for e in losers if isinstance(e, RpcError)} == {winner["id"]}
        # Each loser's unit was rolled back whole: one revision and one root were added.
        shown = call(shared, "thread/show", {"threadId": thread_id})
        assert shown["thread"]["revision"] == 2
        assert [r["id"] for r in shown["roots"]] == [winner["id"]]
    finally:
        call(shared, "execution/cancel", {"executionId": winner["id"]})


def test_stale_if_revision_is_a_revision_conflict(shared: DaemonProcess, work: Path) -> None:
    thread_id = new_thread(shared, work)
    read = call(shared, "thread/show", {"threadId": thread_id})["thread"]["revision"]
    first = continue_headless(shared, thread_id, "true", work, ifRevision=read)
    settled(shared, first["execution"]["id"])
    moved = call(shared, "thread/show", {"threadId": thread_id})["thread"]["revision"]
    assert moved == read + 2  # continued, then settled: one revision each
    error = rpc_error(
        shared,
        "thread/continue",
        {"threadId": thread_id, "runtime": "command", "headless": True, "args": ["true"],
         "cwd": str(work), "ifRevision": read},
    )  # fmt: skip
    assert error.name == "THREAD_REVISION_CONFLICT"
    assert error.data["currentRevision"] == moved
    assert call(shared, "thread/show", {"threadId": thread_id})["thread"]["revision"] == moved


# invariant 5


def test_settle_with_foreign_thread_is_binding_mismatch(shared: DaemonProcess, work: Path) -> None:
    mine = new_thread(shared, work)
    other = new_thread(shared, work)
    # An interactive root the test itself "launched" (the test process is its launcher).
    root = call(
        shared,
        "thread/continue",
        {"threadId": mine, "runtime": "command", "args": ["true"], "cwd": str(work)},
    )["execution"]
    revisions = {t: call(shared, "thread/show", {"threadId": t})["thread"] for t in (mine, other)}
    for wrong in (other, "thread_01doesnotexist0000000000"):
        error = rpc_error(
            shared,
            "execution/settle",
            {"executionId": root["id"], "threadId": wrong, "outcome": "completed"},
        )
        assert error.name == "THREAD_EXECUTION_BINDING_MISMATCH"
        assert error.data["threadId"] == wrong
        assert error.data["executionId"] == root["id"]
    # Nothing moved: the root is unsettled, neither thread advanced.
    assert call(shared, "execution/show", {"executionId": root["id"]})["status"] != "settled"
    for t, before in revisions.items():
        now = call(shared, "thread/show", {"threadId": t})["thread"]
        assert (now["revision"], now["contextRevision"]) == (
            before["revision"],
            before["contextRevision"],
        )
    done = call(
        shared,
        "execution/settle",
        {"executionId": root["id"], "threadId": mine, "outcome": "completed", "exitCode": 0},
    )
    assert done["outcome"] == "completed"
    assert context(shared, mine)["revision"] == 1


# invariant 6


@pytest.mark.parametrize("corruption", ["digest-column", "pin-text-in-body"])
def test_broken_checkpoint_settles_degraded_with_only_the_outcome(
    shared: DaemonProcess, work: Path, corruption: str
) -> None:
    thread_id = new_thread(shared, work)
    run_root(shared, thread_id, pin_script(("decision", "kept from root 1")), work)
    before = context(shared, thread_id)["snapshot"]
    ready, go = work / "ready", work / "go"
    script = pin_script(("decision", "lost decision"), ("next-action", "lost step")) + (
        f" && touch {ready} && while [ ! -e {go} ]; do sleep 0.05; done"
    )
    root = continue_headless(shared, thread_id, script, work)["execution"]
    wait_for(ready.exists, what="the root's pins")
    with db(shared) as conn:
        if corruption == "digest-column":
            conn.execute(
                "UPDATE checkpoints SET digest = ? WHERE execution_id = ?",
                ("sha256:" + "f" * 64, root["id"]),
            )
        else:
            body = conn.execute(
                "SELECT body FROM checkpoints WHERE execution_id = ?", (root["id"],)
            ).fetchone()[0]
            forged = bytes(body).replace(b"lost decision", b"forged decision")
            conn.execute(
                "UPDATE checkpoints SET body = ? WHERE execution_id = ?", (forged, root["id"])
            )
    go.touch()
    assert settled(shared, root["id"])["outcome"] == "completed"
    after = context(shared, thread_id)["snapshot"]
    assert after["degraded"] is True
    assert after["revision"] == before["revision"] + 1
    for kind in ("objective", "decisions", "constraints", "openItems", "nextActions", "resolved"):
        assert after[kind] == before[kind], kind
    assert after["outcomes"][:-1] == before["outcomes"]
    newest = after["outcomes"][-1]
    assert (newest["sourceExecutionId"], newest["status"]) == (root["id"], "completed")
    # The next healthy projection clears the flag.
    run_root(shared, thread_id, pin_script(("decision", "healthy again")), work)
    healed = context(shared, thread_id)["snapshot"]
    assert healed["degraded"] is False
    assert "healthy again" in [line["text"] for line in healed["decisions"]]


# invariant 8


def _pinning_script(ready: Path) -> str:
    return pin_script(("decision", "pinned before the crash"), ("open-item", "unfinished")) + (
        f" && touch {ready} && exec sleep 60"
    )


def test_root_whose_process_vanished_is_interrupted_and_its_pins_survive_interactive(
    shared: DaemonProcess, work: Path
) -> None:
    thread_id = new_thread(shared, work)
    ready = work / "ready"
    started = call(
        shared,
        "thread/continue",
        {"threadId": thread_id, "runtime": "command", "cwd": str(work),
         "args": ["sh", "-c", f"while [ ! -e {work / 'go'} ]; do sleep 0.05; done; "
                  + _pinning_script(ready)]},
    )  # fmt: skip
    launch = started["launch"]
    # As alpctl.launch does: the run inherits the client's environment, alp on PATH.
    bin_dir = os.path.dirname(sys.executable)
    env = {**shared.env, **launch["env"], "PATH": bin_dir + os.pathsep + os.environ["PATH"]}
    process = subprocess.Popen(launch["argv"], env=env, cwd=launch["cwd"], start_new_session=True)
    try:
        call(
            shared,
            "execution/attach",
            {"executionId": started["execution"]["id"], "pid": process.pid},
        )
        (work / "go").touch()
        wait_for(ready.exists, what="pins")
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)
        shown = call(shared, "thread/show", {"threadId": thread_id})
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
    root = shown["roots"][-1]
    assert (root["status"], root["outcome"]) == ("settled", "interrupted")
    _assert_pins_reach_the_next_root(shared, thread_id, shown, root["id"], work)


def test_root_whose_process_vanished_is_interrupted_and_its_pins_survive_headless(
    shared: DaemonProcess, work: Path
) -> None:
    thread_id = new_thread(shared, work)
    ready = work / "ready"
    root = continue_headless(shared, thread_id, _pinning_script(ready), work)["execution"]
    wait_for(ready.exists, what="pins")
    os.killpg(root["pid"], signal.SIGKILL)  # the run's whole process group
    wait_for(
        lambda: (
            call(shared, "thread/reconcile", {"threadId": thread_id})["thread"]["revision"]
            and call(shared, "execution/show", {"executionId": root["id"]})["status"] == "settled"
        ),
        what="the root to settle",
    )
    assert call(shared, "execution/show", {"executionId": root["id"]})["outcome"] == "interrupted"
    shown = call(shared, "thread/show", {"threadId": thread_id})
    _assert_pins_reach_the_next_root(shared, thread_id, shown, root["id"], work)


def _assert_pins_reach_the_next_root(
    d: DaemonProcess, thread_id: str, shown: dict[str, Any], root_id: str, work: Path
) -> None:
    snapshot = shown["context"]["snapshot"]
    assert [(x["text"], x["sourceExecutionId"]) for x in snapshot["decisions"]] == [
        ("pinned before the crash", root_id)
    ]
    assert [x["text"] for x in snapshot["openItems"]] == ["unfinished"]
    assert snapshot["outcomes"][-1]["status"] == "interrupted"
    seen = work / "seen.md"
    nxt = run_root(d, thread_id, f'cat "$ALP_SESSION_CONTEXT" > {seen}', work)
    assert nxt["policy"]["binding"]["contextRevision"] == shown["context"]["revision"]
    text = seen.read_text()
    assert "pinned before the crash" in text and "unfinished" in text


# invariant 10


def test_pin_outside_any_execution_is_refused(shared: DaemonProcess, work: Path) -> None:
    thread_id = new_thread(shared, work)
    running = continue_headless(shared, thread_id, "sleep 30", work)["execution"]
    try:
        for env in (
            {},
            {"ALP_EXECUTION_ID": running["id"], "ALP_THREAD_ID": thread_id},
        ):
            done = shared.cli("context", "pin", "decision", "--", "from outside", extra_env=env)
            assert done.returncode == 1, done.stderr
            assert "PIN_OUTSIDE_EXECUTION" in done.stderr
        error = rpc_error(shared, "context/pin", {"kind": "decision", "text": "raw rpc"})
        assert error.name == "PIN_OUTSIDE_EXECUTION"
    finally:
        call(shared, "execution/cancel", {"executionId": running["id"]})
    assert context(shared, thread_id)["snapshot"]["decisions"] == []


def test_pin_with_forged_execution_label_lands_on_the_real_execution(
    shared: DaemonProcess, work: Path
) -> None:
    victim_thread = new_thread(shared, work)
    victim = continue_headless(shared, victim_thread, "sleep 30", work)["execution"]
    thread_id = new_thread(shared, work)
    out = work / "pin.json"
    script = (
        f"ALP_EXECUTION_ID={victim['id']} ALP_THREAD_ID={victim_thread} "
        f"alp context pin --json decision -- 'forged label' > {out}"
    )
    try:
        root = run_root(shared, thread_id, script, work)
        landed = json.loads(out.read_text())
        assert landed["executionId"] == root["id"]
        assert landed["threadId"] == thread_id
    finally:
        call(shared, "execution/cancel", {"executionId": victim["id"]})
    decisions = context(shared, thread_id)["snapshot"]["decisions"]
    assert [(x["text"], x["sourceExecutionId"]) for x in decisions] == [
        ("forged label", root["id"])
    ]
    assert context(shared, victim_thread)["snapshot"]["decisions"] == []
