"""Delegation from inside a run, the delegation tree, and a cancel that cascades (issue 3).

Agent `lead` (command runtime) may delegate to `helper` only. Children live in their root's
graph, never among the thread's roots; their policy carries the root's thread binding.
A policy edited in the database (its immutability trigger dropped) is never obeyed: it is
re-hashed before every decision and refused as EXECUTION_POLICY_TAMPERED. Cancelling the
root ends every process of every run below it, including ones that ignore SIGTERM or
double-fork out of the process group.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shlex
import sqlite3
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest
import rfc8785
from daemons import StartAlpd
from polling import wait_for

from alpctl.client import RpcError
from alpd.testing.daemon import DaemonProcess

CONFIG = """
[agents.lead]
runtime = "command"
delegatesTo = ["helper"]

[agents.helper]
runtime = "command"

[agents.other]
runtime = "command"
"""

#: `execution/delegate` with explicit runtime args, from inside a run (argv: agent task args…)
DELEGATE_PY = """
import json, os, sys
from pathlib import Path
from alpctl.client import Client
with Client.connect(Path(os.environ["ALP_SOCKET"])) as client:
    result = client.call(
        "execution/delegate", {"agent": sys.argv[1], "task": sys.argv[2], "args": sys.argv[3:]}
    )
print(json.dumps(result))
"""


def jcs_digest(value: Any) -> str:
    return "sha256:" + hashlib.sha256(rfc8785.dumps(value)).hexdigest()


@pytest.fixture(scope="module")
def d(start_module_alpd: StartAlpd) -> DaemonProcess:
    return start_module_alpd(CONFIG)


@pytest.fixture
def work(work: Path) -> Path:
    (work / "delegate.py").write_text(DELEGATE_PY)
    return work


def start_lead(d: DaemonProcess, work: Path, script: str) -> tuple[str, dict[str, Any]]:
    """A new thread with a headless `lead` root running `sh lead.sh`."""
    (work / "lead.sh").write_text(script)
    thread = d.call("thread/create", {"title": "lead", "cwd": str(work)})
    started = d.call(
        "thread/continue",
        {"threadId": thread["id"], "agent": "lead", "headless": True,
         "args": ["sh", str(work / "lead.sh")], "cwd": str(work)},
    )  # fmt: skip
    return thread["id"], started["execution"]


def labelled(execution_ids: set[str]) -> list[psutil.Process]:
    """Live processes carrying one of these ALP_EXECUTION_ID labels."""
    found = []
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if process.status() == psutil.STATUS_ZOMBIE:
                continue
            if process.environ().get("ALP_EXECUTION_ID") in execution_ids:
                found.append(process)
    return found


def kill_all(execution_ids: set[str]) -> None:
    for process in labelled(execution_ids):
        with contextlib.suppress(psutil.Error):
            process.kill()


def test_delegated_children_stay_out_of_the_thread_and_cancel_cascades(
    d: DaemonProcess, work: Path
) -> None:
    py = shlex.quote(sys.executable)
    script = "\n".join(
        [
            f"{py} delegate.py helper 'ignore TERM' sh -c \"trap '' TERM; sleep 100\" > c1.json",
            f"{py} delegate.py helper 'double fork' sh -c '(setsid sleep 100 &) ; sleep 100'"
            " > c2.json",
            "alp delegate other -- x 2> denied.txt; echo $? > denied.rc",
            "touch ready",
            "exec sleep 100",
        ]
    )
    thread_id, root = start_lead(d, work, script)
    ids = {root["id"]}
    try:
        wait_for((work / "ready").exists, what="the lead's delegations")
        root_binding = d.call("execution/show", {"executionId": root["id"]})["policy"]["binding"]
        assert root_binding["id"] == thread_id
        children = [json.loads((work / f"c{i}.json").read_text())["execution"] for i in (1, 2)]
        ids |= {c["id"] for c in children}
        for child in children:
            assert child["kind"] == "sub-agent"
            assert child["agent"] == "helper"
            assert child["threadId"] == thread_id
            assert child["parentId"] == root["id"]
            assert child["rootId"] == root["id"]
            assert child["origin"]["parentExecutionId"] == root["id"]
            assert child["status"] == "running"
            shown = d.call("execution/show", {"executionId": child["id"]})
            # The child carries its root's binding inside its policyHash; its authority is
            # still its own agent's (helper: no tools, delegates to nobody).
            assert shown["policy"]["binding"] == root_binding
            assert shown["policyHash"] == jcs_digest(shown["policy"])
            assert (shown["contextRevision"], shown["contextDigest"]) == (
                root_binding["contextRevision"],
                root_binding["contextDigest"],
            )
            assert (shown["policy"]["agent"], shown["policy"]["delegatesTo"]) == ("helper", [])
            assert shown.get("sequence") is None

        assert (work / "denied.rc").read_text().strip() == "1"
        assert "DELEGATION_DENIED" in (work / "denied.txt").read_text()

        thread = d.call("thread/show", {"threadId": thread_id})
        assert [r["id"] for r in thread["roots"]] == [root["id"]]
        assert thread["children"] == 2

        tree = json.loads(d.cli("delegation", "tree", root["id"], "--json").stdout)
        assert tree["execution"]["id"] == root["id"]
        assert tree["binding"] == thread_id
        assert sorted(c["execution"]["id"] for c in tree["children"]) == sorted(
            c["id"] for c in children
        )
        assert all(c["binding"] == thread_id for c in tree["children"])
        human = d.cli("delegation", "tree", root["id"])
        assert human.returncode == 0 and thread_id in human.stdout
        # The grandchild left the group with setsid; it is still part of the run by label.
        assert len(labelled({children[1]["id"]})) >= 2

        cancelled = d.call("execution/cancel", {"executionId": root["id"]})
        assert (cancelled["status"], cancelled["outcome"]) == ("settled", "cancelled")
        for execution_id in ids:
            ended = d.call("execution/show", {"executionId": execution_id})
            assert (ended["status"], ended["outcome"]) == ("settled", "cancelled"), execution_id
        survivors = wait_for(
            lambda: not labelled(ids) or None, timeout=3, what="every labelled process to end"
        )
        assert survivors
        after = d.call("thread/show", {"threadId": thread_id})
        assert after["thread"]["contextRevision"] == 1
        assert [o["sourceExecutionId"] for o in after["context"]["snapshot"]["outcomes"]] == [
            root["id"]
        ]
    finally:
        kill_all(ids)


def test_delegation_from_outside_a_run_is_refused(d: DaemonProcess, work: Path) -> None:
    thread_id, root = start_lead(d, work, "touch ready; exec sleep 30")
    try:
        wait_for((work / "ready").exists)
        with pytest.raises(RpcError) as info:
            d.call("execution/delegate", {"agent": "helper", "task": "x", "args": ["true"]})
        assert info.value.name == "PIN_OUTSIDE_EXECUTION"
        forged = d.cli(
            "delegate", "helper", "--", "true",
            extra_env={"ALP_EXECUTION_ID": root["id"], "ALP_THREAD_ID": thread_id},
        )  # fmt: skip
        assert forged.returncode == 1
        assert "PIN_OUTSIDE_EXECUTION" in forged.stderr
    finally:
        d.call("execution/cancel", {"executionId": root["id"]})
    assert d.call("thread/show", {"threadId": thread_id}).get("children", 0) == 0


def test_alp_delegate_cli_starts_a_child(d: DaemonProcess, work: Path) -> None:
    """`alp delegate helper -- TASK` from inside a lead run (docs/cli.md): for a command-runtime
    agent the words after `--` are what the child runs."""
    script = (
        "alp delegate helper --json -- sleep 30 > child.json 2> child.err; "
        "echo $? > child.rc; touch ready; exec sleep 30"
    )
    thread_id, root = start_lead(d, work, script)
    ids = {root["id"]}
    try:
        wait_for((work / "ready").exists)
        assert (work / "child.rc").read_text().strip() == "0", (work / "child.err").read_text()
        child = json.loads((work / "child.json").read_text())["execution"]
        ids.add(child["id"])
        assert (child["kind"], child["parentId"], child["threadId"]) == (
            "sub-agent",
            root["id"],
            thread_id,
        )
        assert child["status"] == "running"
    finally:
        with contextlib.suppress(RpcError):
            d.call("execution/cancel", {"executionId": root["id"]})
        kill_all(ids)


def _edit_stored_policy(d: DaemonProcess, execution_id: str, edit: str) -> None:
    """As an attacker with the user's file access: drop the immutability trigger, then edit
    the root's stored policy (`widen`: delegatesTo gains `other`, the hash left alone;
    `rehash`: the same with the hash recomputed but the binding columns moved)."""
    conn = sqlite3.connect(d.home / "alp.db", timeout=10, isolation_level=None)
    try:
        conn.execute("DROP TRIGGER IF EXISTS executions_policy_immutable")
        if edit == "widen":
            document = json.loads(
                conn.execute(
                    "SELECT policy FROM executions WHERE id = ?", (execution_id,)
                ).fetchone()[0]
            )
            document["delegatesTo"] = ["helper", "other"]
            conn.execute(
                "UPDATE executions SET policy = ? WHERE id = ?",
                (rfc8785.dumps(document), execution_id),
            )
        else:
            conn.execute(
                "UPDATE executions SET context_revision = context_revision + 7 WHERE id = ?",
                (execution_id,),
            )
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("edit", "name"),
    [("widen", "EXECUTION_POLICY_TAMPERED"), ("binding", "THREAD_EXECUTION_BINDING_MISMATCH")],
)
def test_an_edited_stored_policy_decides_nothing(
    start_alpd: StartAlpd, work: Path, edit: str, name: str
) -> None:
    script = (
        f"while [ ! -e {work / 'go'} ]; do sleep 0.05; done\n"
        "alp delegate other -- true 2> other.err; echo $? > other.rc\n"
        "alp delegate helper -- true 2> helper.err; echo $? > helper.rc\n"
        "touch ready\nexec sleep 30\n"
    )
    dd = start_alpd(CONFIG)
    thread_id, root = start_lead(dd, work, script)
    try:
        _edit_stored_policy(dd, root["id"], edit)
        (work / "go").touch()
        wait_for((work / "ready").exists, what="the lead's delegations")
        for agent in ("other", "helper"):
            assert (work / f"{agent}.rc").read_text().strip() == "1", agent
            assert name in (work / f"{agent}.err").read_text(), agent
        with pytest.raises(RpcError) as info:
            dd.call("execution/show", {"executionId": root["id"]})
        assert info.value.name == name
        assert info.value.data["executionId"] == root["id"]
        # The thread reports it too, and nothing was delegated.
        with pytest.raises(RpcError) as info:
            dd.call("thread/show", {"threadId": thread_id})
        assert info.value.name == name
        conn = sqlite3.connect(dd.home / "alp.db")
        try:
            rows = conn.execute("SELECT id FROM executions WHERE thread_id = ?", (thread_id,))
            assert [r[0] for r in rows] == [root["id"]]
        finally:
            conn.close()
    finally:
        with contextlib.suppress(RpcError):
            dd.call("execution/cancel", {"executionId": root["id"]})
