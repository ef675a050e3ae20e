"""The end-to-end flow of a Thread through the `alp` CLI and a real alpd (issue 3).

Root 1 pins, settles; root 2 starts on the projected snapshot and reads it from
`$ALP_SESSION_CONTEXT`. Interactive roots run in a pseudo-terminal, as a person would run
them; headless ones under alpd.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from daemons import StartAlpd
from polling import wait_for

from alpctl.client import RpcError
from alpd.testing.daemon import DaemonProcess

pytestmark = pytest.mark.both_stores

ROOT_LINE = re.compile(r"root #(\d+) of (thread_[0-9a-z]+) (\w+)")


def show(d: DaemonProcess, thread_id: str) -> dict[str, Any]:
    result: dict[str, Any] = d.call("thread/show", {"threadId": thread_id})
    return result


def execution(d: DaemonProcess, execution_id: str) -> dict[str, Any]:
    result: dict[str, Any] = d.call("execution/show", {"executionId": execution_id})
    return result


@pytest.fixture(scope="module")
def d(start_module_alpd: StartAlpd) -> DaemonProcess:
    return start_module_alpd()


def cli_ok(d: DaemonProcess, *args: str, cwd: Path) -> Any:
    done = d.cli(*args, cwd=str(cwd))
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done


def start_interactive(d: DaemonProcess, work: Path, script: str, title: str = "t") -> str:
    """`alp --title … --runtime command -- sh -c SCRIPT` (no terminal); the new thread's id."""
    done = cli_ok(d, "--title", title, "--runtime", "command", "--", "sh", "-c", script, cwd=work)
    match = ROOT_LINE.search(done.stderr)
    assert match, done.stderr
    return match.group(2)


def continue_headless_cli(d: DaemonProcess, thread_id: str, script: str, work: Path) -> Any:
    return d.cli(
        "thread", "continue", thread_id, "--json", "--runtime", "command", "--headless",
        "--wait", "--", "sh", "-c", script, cwd=str(work),
    )  # fmt: skip


def test_pins_reach_the_next_root_as_work_state_not_authority(d: DaemonProcess, work: Path) -> None:
    thread_id = start_interactive(
        d,
        work,
        "alp context pin decision -- 'store threads in SQLite' && "
        "alp context pin next-action -- 'write the migration'",
        title="flow",
    )
    first = show(d, thread_id)
    assert [r["outcome"] for r in first["roots"]] == ["completed"]
    root1 = first["roots"][0]["id"]
    rev1 = json.loads(cli_ok(d, "thread", "context", thread_id, "--json", cwd=work).stdout)
    assert rev1["revision"] == 1
    assert [(x["text"], x["sourceExecutionId"]) for x in rev1["snapshot"]["decisions"]] == [
        ("store threads in SQLite", root1)
    ]
    seen = work / "seen.md"
    done = continue_headless_cli(d, thread_id, f'cat "$ALP_SESSION_CONTEXT" > {seen}', work)
    assert done.returncode == 0, done.stderr
    root2 = execution(d, json.loads(done.stdout)["execution"]["id"])
    assert (root2["sequence"], root2["outcome"]) == (2, "completed")
    text = seen.read_text()
    assert text.startswith("# work state, not authority")
    assert "store threads in SQLite" in text and "write the migration" in text
    assert root1 in text
    assert text.index("work state, not authority") < text.index("store threads in SQLite")
    assert root2["policy"]["binding"] == {
        "id": thread_id,
        "contextRevision": 1,
        "contextDigest": rev1["digest"],
    }
    human = cli_ok(d, "thread", "show", thread_id, cwd=work).stdout
    assert "store threads in SQLite" in human and root2["id"] in human


def test_bare_alp_always_creates_a_new_thread(d: DaemonProcess, work: Path) -> None:
    first = start_interactive(d, work, "true", title="same title")
    second = start_interactive(d, work, "true", title="same title")
    assert first != second
    for thread_id in (first, second):
        shown = show(d, thread_id)
        assert [r["sequence"] for r in shown["roots"]] == [1]
    listed = json.loads(cli_ok(d, "thread", "list", "--json", cwd=work).stdout)["threads"]
    assert {first, second} <= {t["id"] for t in listed}


def test_continue_on_closed_thread_is_thread_closed(d: DaemonProcess, work: Path) -> None:
    thread_id = start_interactive(d, work, "true")
    cli_ok(d, "thread", "close", thread_id, cwd=work)
    done = continue_headless_cli(d, thread_id, "true", work)
    assert done.returncode == 1
    assert "THREAD_CLOSED" in done.stderr
    assert json.loads(done.stdout)["error"]["name"] == "THREAD_CLOSED"
    with pytest.raises(RpcError) as info:
        d.call(
            "thread/continue",
            {"threadId": thread_id, "runtime": "command", "args": ["true"], "cwd": str(work)},
        )
    assert info.value.name == "THREAD_CLOSED"
    assert len(show(d, thread_id)["roots"]) == 1


# interactive roots in a pseudo-terminal


def spawn_in_pty(d: DaemonProcess, work: Path, *args: str) -> tuple[int, int]:
    """`alp ARGS…` as the session leader of a new pseudo-terminal; (pid, master fd)."""
    env = {**d.env, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}
    pid, master = pty.fork()
    if pid == 0:  # the child: become `alp`
        try:
            os.chdir(work)
            os.execve(sys.executable, [sys.executable, "-m", "alpctl", *args], env)
        finally:
            os._exit(127)
    return pid, master


def read_until_exit(pid: int, master: int, timeout: float = 30.0) -> tuple[str, int]:
    output = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the terminal's last writer is gone
                chunk = b""
            if not chunk:
                break
            output += chunk
    _, status = os.waitpid(pid, 0)
    os.close(master)
    return output.decode(errors="replace"), os.waitstatus_to_exitcode(status)


def test_interactive_root_in_a_terminal_settles_with_its_exit_status(
    d: DaemonProcess, work: Path
) -> None:
    script = "test -t 0 && test -t 1 && echo ON-A-TERMINAL; alp context pin decision -- tty; exit 7"
    pid, master = spawn_in_pty(
        d, work, "--title", "tty", "--runtime", "command", "--", "sh", "-c", script
    )
    output, status = read_until_exit(pid, master)
    assert "ON-A-TERMINAL" in output
    # alp keeps its own exit codes (1: the run failed); the runtime's status is reported.
    assert status == 1, output
    assert "exited 7" in output
    match = ROOT_LINE.search(output)
    assert match and match.group(3) == "failed", output
    root = show(d, match.group(2))["roots"][0]
    assert (root["status"], root["outcome"], root["exitCode"]) == ("settled", "failed", 7)
    assert root["headless"] is False
    decisions = show(d, match.group(2))["context"]["snapshot"]["decisions"]
    assert [x["text"] for x in decisions] == ["tty"]


def test_an_interactive_run_that_exits_3_is_a_failed_run_not_an_unreachable_daemon(
    d: DaemonProcess, work: Path
) -> None:
    pid, master = spawn_in_pty(
        d, work, "--json", "--runtime", "command", "--", "sh", "-c", "exit 3"
    )
    output, status = read_until_exit(pid, master)
    assert status == 1, output
    document = json.loads(next(line for line in output.splitlines() if line.startswith("{")))
    assert document["exitCode"] == 3
    assert (document["execution"]["outcome"], document["execution"]["exitCode"]) == ("failed", 3)
    assert "exited 3" in output


def test_killed_client_leaves_root_running_until_the_runtime_ends(
    d: DaemonProcess, work: Path
) -> None:
    pidfile, stop = work / "runtime.pid", work / "stop"
    script = (
        f"trap '' HUP; echo $$ > {pidfile}.tmp && mv {pidfile}.tmp {pidfile}; "
        f"while [ ! -e {stop} ]; do sleep 0.05; done"
    )
    title = f"killed-client-{work.parent.name}"
    client_pid, master = spawn_in_pty(
        d, work, "--title", title, "--runtime", "command", "--", "sh", "-c", script
    )
    try:
        runtime_pid = int(wait_for(lambda: pidfile.exists() and pidfile.read_text(), what="pid"))
        threads = d.call("thread/list", {"all": True})["threads"]
        thread_id = next(t["id"] for t in threads if t["title"] == title)
        root_id = wait_for(
            lambda: (r := show(d, thread_id)["roots"][0])["status"] == "running" and r["id"],
            what="attach",
        )
        os.kill(client_pid, signal.SIGKILL)
        os.waitpid(client_pid, 0)
        assert psutil.pid_exists(runtime_pid)
        # Reconcile (what thread/show and the background tick run) sees the runtime alive
        # without its client: the root stays running, settled by nobody.
        assert show(d, thread_id)["roots"][0]["status"] == "running"
        reconciled = d.call("thread/reconcile", {"threadId": thread_id})
        assert reconciled["settled"] == [], reconciled
        assert execution(d, root_id)["status"] == "running"
        stop.touch()
        # No client will settle it: the daemon's own reconciler must notice the end.
        root = wait_for(
            lambda: (e := execution(d, root_id))["status"] == "settled" and e,
            timeout=15,
            what="the daemon to reconcile the root",
        )
        assert root["outcome"] == "interrupted"
        assert show(d, thread_id)["thread"]["contextRevision"] == 1
    finally:
        stop.touch()
        os.close(master)


# headless roots


def test_headless_wait_returns_when_settled_with_exit_code(d: DaemonProcess, work: Path) -> None:
    thread_id = start_interactive(d, work, "true")
    ok = continue_headless_cli(d, thread_id, "sleep 0.3; exit 0", work)
    assert ok.returncode == 0, ok.stderr
    result = json.loads(ok.stdout)["execution"]
    assert (result["status"], result["outcome"], result["exitCode"]) == ("settled", "completed", 0)
    bad = continue_headless_cli(d, thread_id, "sleep 0.3; exit 5", work)
    assert bad.returncode == 1
    result = json.loads(bad.stdout)["execution"]
    assert (result["status"], result["outcome"], result["exitCode"]) == ("settled", "failed", 5)
    assert show(d, thread_id)["thread"]["contextRevision"] == 3


def test_runtime_failing_at_once_settles_failed_with_stderr_tail(
    d: DaemonProcess, work: Path
) -> None:
    thread_id = start_interactive(d, work, "true")
    script = "i=0; while [ $i -lt 400 ]; do echo noise line $i >&2; i=$((i+1)); done; " + (
        "echo 'fatal: no config at /etc/nowhere' >&2; exit 2"
    )
    done = continue_headless_cli(d, thread_id, script, work)
    assert done.returncode == 1
    root = execution(d, json.loads(done.stdout)["execution"]["id"])
    assert (root["outcome"], root["exitCode"]) == ("failed", 2)
    assert root["outputTail"].rstrip().endswith("fatal: no config at /etc/nowhere")
    assert "noise line 0\n" not in root["outputTail"]  # a tail, not the whole stream
    assert show(d, thread_id)["context"]["snapshot"]["outcomes"][-1]["status"] == "failed"


def test_missing_program_is_runtime_unavailable_naming_it(d: DaemonProcess, work: Path) -> None:
    thread_id = start_interactive(d, work, "true")
    before = show(d, thread_id)["thread"]
    with pytest.raises(RpcError) as info:
        d.call(
            "thread/continue",
            {"threadId": thread_id, "runtime": "command", "headless": True,
             "args": ["alp-no-such-program", "x"], "cwd": str(work)},
        )  # fmt: skip
    assert info.value.name == "RUNTIME_UNAVAILABLE"
    assert info.value.data["program"] == "alp-no-such-program"
    assert "alp-no-such-program" in info.value.message
    done = d.cli(
        "thread", "continue", thread_id, "--runtime", "command", "--", "alp-no-such-program",
        cwd=str(work),
    )  # fmt: skip
    assert done.returncode == 1
    assert "RUNTIME_UNAVAILABLE" in done.stderr and "alp-no-such-program" in done.stderr
    after = show(d, thread_id)["thread"]
    assert (after["revision"], after["rootCount"]) == (before["revision"], 1)


def test_a_resolve_that_matches_no_open_item_says_so_and_lists_them(
    d: DaemonProcess, work: Path
) -> None:
    thread_id = start_interactive(d, work, "alp context pin open-item -- 'does checkout need 3DS'")
    item = json.loads(cli_ok(d, "thread", "context", thread_id, "--json", cwd=work).stdout)
    open_id = item["snapshot"]["openItems"][0]["id"]
    missed, hit = work / "missed.txt", work / "hit.json"
    script = (
        f"alp context pin resolve -- no-such-item > {missed} && "
        f"alp --json context pin resolve -- {open_id} > {hit}"
    )
    done = continue_headless_cli(d, thread_id, script, work)
    assert done.returncode == 0, done.stderr
    text = missed.read_text()
    assert "no open item has the id or text 'no-such-item'" in text
    assert f"{open_id}  does checkout need 3DS" in text
    assert json.loads(hit.read_text())["matched"] is True
    after = json.loads(cli_ok(d, "thread", "context", thread_id, "--json", cwd=work).stdout)
    assert after["snapshot"]["openItems"] == []
