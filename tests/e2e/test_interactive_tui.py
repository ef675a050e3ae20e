"""Interactive roots in a pseudo-terminal: the ``alp`` client runs the runtime in the terminal.

With the ``command`` runtime: a root that pins from inside the terminal settles ``completed``
with its pin projected; a client killed with SIGKILL while its runtime goes on leaves the root
to the daemon, which settles it ``interrupted`` (with what it pinned) once the runtime exits.

With the real TUIs (Claude Code through ``alp --runtime claude``, Codex through
``alp thread continue ID --agent coder``), seeded as docs/runtimes.md says so that no
first-run dialog stops them offline: a prompt typed into the terminal reaches the model server
together with the thread's session context, and ending the TUI settles the root.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import runtimes
from fixtures_alp import AlpWorld, PtySession, processes_labelled, wait_until
from model_server import RecordedRequest

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

Spawn = Callable[..., PtySession]
HEADING = "work state, not authority"


def alp_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "alpctl", *args]


def terminal_env(world: AlpWorld) -> dict[str, str]:
    return {**world.env, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}


def only_thread(world: AlpWorld) -> dict[str, Any]:
    """``thread/show`` of the one thread, once its first root exists (``thread/start`` may
    be between creating the thread and its root)."""

    def shown() -> dict[str, Any] | None:
        threads = world.cli_json("thread", "list")["threads"]
        assert len(threads) <= 1, threads
        if not threads:
            return None
        result: dict[str, Any] = world.call("thread/show", threadId=threads[0]["id"])
        return result if result["roots"] else None

    found: dict[str, Any] = wait_until(shown, 10, "a thread with a root")
    return found


def decisions(world: AlpWorld, thread_id: str) -> list[tuple[str, str]]:
    snapshot = world.context(thread_id)["snapshot"]
    return [(line["text"], line["sourceExecutionId"]) for line in snapshot["decisions"]]


@pytest.fixture
def reap_runs() -> Iterator[list[str]]:
    """Execution ids whose leftover processes are killed after the test (a TUI that hung)."""
    ids: list[str] = []
    yield ids
    for execution_id in ids:
        for process in processes_labelled(execution_id):
            process.kill()


# -- the command runtime -------------------------------------------------------------------------


def test_interactive_root_in_a_terminal_pins_and_settles_completed(
    alp_world: AlpWorld, pty_sessions: Spawn
) -> None:
    world = alp_world
    script = "alp context pin decision -- from tty; exit 0"
    session = pty_sessions(
        alp_argv("--runtime", "command", "--", "sh", "-c", script), terminal_env(world), world.work
    )
    assert session.wait(30) == 0, session.text()

    shown = only_thread(world)
    (root,) = shown["roots"]
    assert (root["outcome"], root["headless"]) == ("completed", False), (root, session.text())
    assert f"pinned decision to {root['id']}" in session.text()
    assert decisions(world, shown["thread"]["id"]) == [("from tty", root["id"])]


def test_killed_client_leaves_the_root_to_the_daemon_which_settles_it_interrupted(
    alp_world: AlpWorld, pty_sessions: Spawn
) -> None:
    world = alp_world
    # The runtime outlives its client: it ignores the hang-up the terminal gets when the
    # client (the session leader) dies, and writes to files (the terminal is gone by then).
    script = (
        'trap "" HUP; echo started; sleep 1.5; '
        "alp context pin decision -- after the client died > pin.out 2>&1; touch done"
    )
    session = pty_sessions(
        alp_argv("--runtime", "command", "--", "sh", "-c", script), terminal_env(world), world.work
    )
    wait_until(lambda: "started" in session.text(), 15, "the runtime to start")
    thread = only_thread(world)
    root_id = thread["roots"][0]["id"]
    wait_until(lambda: world.show(root_id)["status"] == "running", 10, "execution/attach")

    os.kill(session.pid, signal.SIGKILL)
    session.wait(10)
    assert world.show(root_id)["status"] == "running", "the runtime still runs"
    wait_until((world.work / "done").exists, 20, "the runtime to finish")
    assert "pinned decision" in (world.work / "pin.out").read_text()

    # No one settles it but the daemon's own reconciler (execution/wait does not reconcile).
    settled = world.wait_settled(root_id, timeout=15)
    assert settled["outcome"] == "interrupted", settled
    assert decisions(world, thread["thread"]["id"]) == [("after the client died", root_id)]


# -- the real TUIs -------------------------------------------------------------------------------

_ESCAPES = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b.")


def screen(session: PtySession) -> str:
    """What the TUI printed, escapes and all whitespace removed (TUIs move the cursor
    instead of printing spaces, so words run together in the raw stream)."""
    return re.sub(r"\s+", "", _ESCAPES.sub("", session.text()))


def type_prompt(session: PtySession, prompt: str) -> None:
    """Type a prompt, then Enter on its own (sent together, a TUI may take it as a paste)."""
    session.send(prompt)
    time.sleep(0.3)
    session.send("\r")


def type_once_echoed(session: PtySession, prompt: str, timeout: float = 90.0) -> None:
    """Type a prompt once the TUI takes input, then Enter. Claude Code drops keys typed while
    it connects its MCP servers (alp's own takes seconds to import on a loaded machine), so
    type, and if the text is not echoed, clear the line (Ctrl-U) and type it again."""
    wanted = re.sub(r"\s+", "", prompt)
    deadline = time.monotonic() + timeout
    while True:
        session.send(prompt)
        try:
            wait_until(lambda: wanted in screen(session), 3, "the echo")
            break
        except pytest.fail.Exception:
            if time.monotonic() > deadline:
                raise
            session.send("\x15")
    time.sleep(0.3)
    session.send("\r")


def quit_claude_code(session: PtySession) -> int:
    """Ctrl-C, then — once Claude Code asks "Press Ctrl-C again to exit" — Ctrl-C again.

    Never a Ctrl-C more than needed: once a TUI has handed the terminal back, Ctrl-C is a
    SIGINT to the foreground group and kills the runtime (exit 130: alp's `interrupted`)."""
    session.send("\x03")
    wait_until(lambda: "PressCtrl-Cagaintoexit" in screen(session), 10, "the exit prompt")
    session.send("\x03")
    return session.wait(20)


def quit_codex(session: PtySession) -> int:
    """One Ctrl-C quits an idle Codex ("Shutting down..."; it may take a few seconds)."""
    session.send("\x03")
    return session.wait(20)


def request_with(world: AlpWorld, api: str, text: str) -> Callable[[], RecordedRequest | None]:
    def find() -> RecordedRequest | None:
        for request in world.server.model_requests(api):  # type: ignore[arg-type]
            if text in json.dumps(request.body, ensure_ascii=False):
                return request
        return None

    return find


def test_claude_code_tui_gets_the_session_context_pins_and_settles_when_quit(
    alp_world: AlpWorld, pty_sessions: Spawn, reap_runs: list[str]
) -> None:
    world = alp_world
    runtimes.seed_claude_for_tui(world.home, [world.work])
    session = pty_sessions(alp_argv("--runtime", "claude"), terminal_env(world), world.work)
    shown = only_thread(world)
    thread_id, root_id = shown["thread"]["id"], shown["roots"][0]["id"]
    reap_runs.append(root_id)
    wait_until(lambda: "automodeon" in screen(session), 30, "the TUI's prompt")

    type_once_echoed(session, "USE_BASH: alp context pin decision -- typed into the claude tui")
    first = wait_until(request_with(world, "anthropic", "typed into the claude tui"), 30, "it")
    assert HEADING in first.system_text and thread_id in first.system_text
    wait_until(
        lambda: f"toolresult:pinneddecisionto{root_id}" in screen(session),
        30,
        f"the reply after the pin; screen: {screen(session)[-1500:]}",
    )
    assert quit_claude_code(session) == 0, session.text()[-2000:]

    settled = world.wait_settled(root_id, timeout=10)
    assert (settled["outcome"], settled["headless"]) == ("completed", False), settled
    assert decisions(world, thread_id) == [("typed into the claude tui", root_id)]


def test_codex_tui_continues_a_thread_with_its_context_and_settles_when_quit(
    alp_world: AlpWorld, pty_sessions: Spawn, reap_runs: list[str]
) -> None:
    world = alp_world
    thread_id = world.cli_json("thread", "create", "--title", "codex tui")["id"]
    before = world.cli_json(
        "thread",
        "continue",
        thread_id,
        "--runtime",
        "command",
        "--headless",
        "--",
        "alp",
        "context",
        "pin",
        "decision",
        "--",
        "pinned before the tui",
    )["execution"]["id"]
    assert world.wait_settled(before)["outcome"] == "completed", world.run_output(before)

    argv = alp_argv("thread", "continue", thread_id, "--agent", "coder")
    session = pty_sessions(argv, terminal_env(world), world.work)
    root_id = wait_until(
        lambda: world.call("thread/show", threadId=thread_id)["thread"].get("busyRoot"),
        15,
        "the interactive root",
    )
    reap_runs.append(root_id)
    # Codex reports its state to the terminal (OSC 7501) once its prompt is ready.
    wait_until(lambda: "state=idle" in session.text(), 30, "the TUI's prompt")

    type_prompt(session, "USE_SHELL: alp context pin decision -- typed into the codex tui")
    request = wait_until(request_with(world, "openai", "typed into the codex tui"), 30, "it")
    carrying = [t for t in request.message_texts("developer") if HEADING in t]
    assert len(carrying) == 1 and "pinned before the tui" in carrying[0] and before in carrying[0]
    assert not any("pinned before the tui" in t for t in request.message_texts("user"))
    wait_until(
        lambda: "state=done" in session.text() and f"pinneddecisionto{root_id}" in screen(session),
        30,
        f"the turn to end; screen: {screen(session)[-1500:]}",
    )
    assert quit_codex(session) == 0, session.text()[-2000:]

    settled = world.wait_settled(root_id, timeout=10)
    assert (settled["outcome"], settled["headless"]) == ("completed", False), settled
    assert decisions(world, thread_id) == [
        ("pinned before the tui", before),
        ("typed into the codex tui", root_id),
    ]
    # Its output was the terminal: alpd found the session by the rollout the TUI held open
    # (or, once it ended, by the rollout of this cwd written since the run began), and
    # copied the transcript into history.
    shown = world.call("execution/show", executionId=root_id)
    assert shown.get("nativeSessionId") and "rollout-" in (shown.get("transcriptPath") or "")
    wait_until(
        lambda: world.call("execution/show", executionId=root_id).get("historyLevel") == "complete",
        15,
        "the interactive codex transcript in history",
    )
