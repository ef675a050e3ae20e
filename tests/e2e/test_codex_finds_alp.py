"""A Codex run finds `alp` when alp is installed in a virtualenv that is not on the login
PATH (issue 21, point 19). Codex runs its shell tool as a login shell (`bash -lc`), whose
profile resets PATH: `alp context pin` then said `command not found`. alpd gives every run
`ALP_BIN` (the absolute path of alp), puts alp's directory first on a headless run's PATH, and
keeps Codex's shell from being a login shell (`allow_login_shell=false`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fixtures_alp import VENV_BIN, AlpWorld, WorldFactory

DECISION = "pinned from a codex shell without alp on the login PATH"


@pytest.fixture
def world(make_world: WorldFactory, codex_bin: Path, claude_bin: Path) -> AlpWorld:
    # Neither alpd's PATH nor the login profile names the virtualenv holding alp.
    path = os.pathsep.join(
        [str(codex_bin.parent), str(claude_bin.parent)]
        + [p for p in os.environ["PATH"].split(os.pathsep) if Path(p) != VENV_BIN]
    )
    built = make_world(path=path)
    (built.home / ".profile").write_text("")
    return built


def test_a_codex_run_pins_with_plain_alp_when_alp_is_not_on_the_login_path(
    world: AlpWorld,
) -> None:
    thread_id = world.cli_json("thread", "create", "--title", "codex path")["id"]
    execution_id = world.continue_headless(
        thread_id, f"USE_SHELL: alp context pin decision -- {DECISION}", agent="coder"
    )
    settled = world.wait_settled(execution_id)
    assert settled["outcome"] == "completed", world.run_output(execution_id)
    requests = world.server.model_requests("openai")
    assert len(requests) == 2, "a shell round is two model requests"
    snapshot = world.context(thread_id)["snapshot"]
    assert [(x["text"], x["sourceExecutionId"]) for x in snapshot["decisions"]] == [
        (DECISION, execution_id)
    ], world.run_output(execution_id)
