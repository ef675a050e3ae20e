"""Supervision of real runs: crashes of the runtime and of alpd, bad runtimes, cancel.

- a Claude Code run killed with SIGKILL mid-turn settles ``interrupted``, and what it pinned
  before (in a first tool round) reaches the next root;
- alpd killed with SIGKILL while a headless Claude Code root runs: the run goes on without
  it (own session, output in files); on restart the root is settled from the ``exit-status``
  file the ``sh`` shim wrote when the run ended while alpd was down, or re-adopted and watched
  to its end when it still runs (``alpd/services/runs/reconcile.py``) — never lost;
- a runtime that exits at once settles ``failed`` with its output's tail; a missing binary is
  ``RUNTIME_UNAVAILABLE`` naming what was looked for and how to install it;
- ``alp execution cancel`` ends a run that ignores SIGTERM and one that double-forked out of
  its process group (command runtime: no CLI needed for that).
"""

from __future__ import annotations

import os
import signal

import psutil
import pytest
from fixtures_alp import AlpWorld, WorldFactory, processes_labelled, wait_until
from model_server import TextReply, ToolCallReply

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

PIN = "the crash happened after this decision"


def claude_process(world: AlpWorld, execution_id: str) -> psutil.Process:
    """The ``claude`` process of a headless run: a child of the run's ``sh`` shim."""
    shim = psutil.Process(world.show(execution_id)["pid"])
    found = [p for p in shim.children(recursive=True) if p.name() == "claude"]
    assert len(found) == 1, [(p.pid, p.name()) for p in shim.children(recursive=True)]
    return found[0]


def pin_then_hold(world: AlpWorld, hold: float) -> None:
    """Claude's model: first run the pin through Bash, then hold the answer ``hold`` seconds."""
    world.server.script(
        ToolCallReply(f"alp context pin decision -- {PIN}"),
        TextReply("finished", delay=hold),
        api="anthropic",
    )


def test_runtime_killed_mid_turn_is_interrupted_and_its_pins_reach_the_next_root(
    alp_world: AlpWorld,
) -> None:
    world = alp_world
    pin_then_hold(world, hold=60)
    thread_id, first = world.start_headless("pin, then think for a long time")
    # The second model request is sent only after the Bash tool (the pin) has finished.
    world.server.wait_for_model_requests(2, timeout=30)
    claude_process(world, first).send_signal(signal.SIGKILL)

    settled = world.wait_settled(first, timeout=20)
    assert (settled["outcome"], settled["exitCode"]) == ("interrupted", 128 + signal.SIGKILL)
    snapshot = world.context(thread_id)["snapshot"]
    assert [(d["text"], d["sourceExecutionId"]) for d in snapshot["decisions"]] == [(PIN, first)]
    assert [(o["sourceExecutionId"], o["status"]) for o in snapshot["outcomes"]] == [
        (first, "interrupted")
    ]

    second = world.continue_headless(thread_id, "carry on", runtime="claude")
    assert world.wait_settled(second)["outcome"] == "completed", world.run_output(second)
    request = world.server.model_requests("anthropic")[-1]
    assert PIN in request.system_text and first in request.system_text


def test_headless_root_that_ends_while_alpd_is_down_settles_completed_after_restart(
    alp_world: AlpWorld,
) -> None:
    world = alp_world
    pin_then_hold(world, hold=1.5)
    thread_id, execution_id = world.start_headless("pin, then finish soon")
    world.server.wait_for_model_requests(2, timeout=30)
    run = claude_process(world, execution_id)
    world.daemon.kill9()

    exit_status = world.exec_dir(execution_id) / "exit-status"
    wait_until(exit_status.exists, 30, "the run to end (and its shim to write exit-status)")
    assert exit_status.read_text() == "0"
    assert not run.is_running() or run.status() == psutil.STATUS_ZOMBIE

    world.daemon.start()
    settled = world.wait_settled(execution_id, timeout=20)
    assert (settled["outcome"], settled["exitCode"]) == ("completed", 0), settled
    assert "finished" in (settled.get("outputTail") or "")
    decisions = world.context(thread_id)["snapshot"]["decisions"]
    assert [(d["text"], d["sourceExecutionId"]) for d in decisions] == [(PIN, execution_id)]


def test_headless_root_still_running_at_restart_is_readopted_and_watched_to_its_end(
    alp_world: AlpWorld,
) -> None:
    world = alp_world
    pin_then_hold(world, hold=5)
    thread_id, execution_id = world.start_headless("pin, then finish after a while")
    world.server.wait_for_model_requests(2, timeout=30)
    run = claude_process(world, execution_id)
    world.daemon.kill9()
    world.daemon.start()

    shown = world.call("thread/show", threadId=thread_id)  # reconciles first
    assert run.is_running(), "the run should outlive alpd"
    assert [(r["id"], r["status"]) for r in shown["roots"]] == [(execution_id, "running")]
    settled = world.wait_settled(execution_id, timeout=30)
    assert (settled["outcome"], settled["exitCode"]) == ("completed", 0), settled
    assert "run_adopted" in world.daemon.log_text()
    decisions = world.context(thread_id)["snapshot"]["decisions"]
    assert [(d["text"], d["sourceExecutionId"]) for d in decisions] == [(PIN, execution_id)]


def test_runtime_that_exits_at_once_settles_failed_with_its_output_tail(
    alp_world: AlpWorld,
) -> None:
    world = alp_world
    _, execution_id = world.start_headless("hello", args=["--no-such-flag"])
    settled = world.wait_settled(execution_id, timeout=30)
    assert settled["outcome"] == "failed" and settled["exitCode"] not in (None, 0), settled
    shown = world.show(execution_id)
    assert "unknown option '--no-such-flag'" in (shown.get("outputTail") or ""), shown
    assert world.server.model_requests() == []


def test_missing_runtime_binary_is_runtime_unavailable_naming_it_and_how_to_install(
    make_world: WorldFactory,
) -> None:
    world = make_world('[runtimes.claude]\ncommand = "/nonexistent/claude"\n', with_runtimes=False)

    for headless in (["--headless", "--prompt", "hi"], []):
        error = world.cli_json("--runtime", "claude", *headless, expect_rc=1)["error"]
        assert error["name"] == "RUNTIME_UNAVAILABLE", error
        assert "/nonexistent/claude" in error["message"]
        assert "npm install -g @anthropic-ai/claude-code" in error["message"]
    assert world.cli_json("thread", "list")["threads"] == [], "a failed start leaves no thread"

    # Codex is not on alpd's PATH at all.
    thread_id = world.cli_json("thread", "create", "--title", "no codex")["id"]
    argv = ["thread", "continue", thread_id, "--agent", "coder", "--headless", "--prompt", "hi"]
    error = world.cli_json(*argv, expect_rc=1)["error"]
    assert error["name"] == "RUNTIME_UNAVAILABLE", error
    assert "'codex' was not found on PATH" in error["message"]
    assert "npm install -g @openai/codex" in error["message"]
    # The failed continue left the thread free for the next root.
    result = world.cli_json(
        "thread", "continue", thread_id, "--runtime", "command", "--headless", "--", "true"
    )
    assert world.wait_settled(result["execution"]["id"])["outcome"] == "completed"


def start_command(world: AlpWorld, script: str) -> str:
    """A headless command-runtime root running ``sh -c script`` in the workspace."""
    _, execution_id = world.start_headless(None, runtime="command", args=["sh", "-c", script])
    return execution_id


def cancel_and_check_nothing_remains(world: AlpWorld, execution_id: str) -> None:
    assert processes_labelled(execution_id), "the run should be alive before the cancel"
    cancelled = world.cli_json("execution", "cancel", execution_id)
    settled = world.wait_settled(execution_id, timeout=20)
    assert settled["outcome"] == "cancelled", (cancelled, settled)
    wait_until(
        lambda: not processes_labelled(execution_id),
        5,
        f"no process labelled ALP_EXECUTION_ID={execution_id}",
    )


def test_cancel_ends_a_run_that_ignores_sigterm(make_world: WorldFactory) -> None:
    world = make_world(with_runtimes=False)
    ready = world.work / "ready"
    execution_id = start_command(world, 'trap "" TERM; echo $$ > ready; while :; do sleep 1; done')
    wait_until(ready.exists, 10, "the run to start")
    cancel_and_check_nothing_remains(world, execution_id)


def test_cancel_ends_a_run_that_double_forked_out_of_its_process_group(
    make_world: WorldFactory,
) -> None:
    world = make_world(with_runtimes=False)
    escaped_pid_file = world.work / "escaped.pid"
    # The subshell starts `setsid sleep` in the background and exits: the sleep is reparented
    # to init, in a session (and process group) of its own.
    execution_id = start_command(
        world,
        "( setsid sleep 300 & echo $! > escaped.pid.tmp; mv escaped.pid.tmp escaped.pid )"
        "; sleep 300",
    )
    wait_until(escaped_pid_file.exists, 10, "the double fork")
    escaped = psutil.Process(int(escaped_pid_file.read_text()))
    wait_until(lambda: escaped.name() == "sleep", 5, "setsid to exec sleep")
    run_group = os.getpgid(world.show(execution_id)["pid"])
    assert (
        os.getpgid(escaped.pid) != run_group and escaped.ppid() != world.show(execution_id)["pid"]
    )

    cancel_and_check_nothing_remains(world, execution_id)
    assert not escaped.is_running() or escaped.status() == psutil.STATUS_ZOMBIE
