"""File checkpoints with the real Claude Code and Codex CLIs (issue 27, points 1–2;
docs/checkpoints.md), against the scripted model server: a root edits the workspace through
Bash (both runtimes) and through Claude Code's own Write tool; `alp thread diff` shows it,
`alp thread undo --files` restores the exact bytes, removes the created files and leaves the
ignored file and the file outside the workspace as the root left them; a change made after
the root makes the restore refuse; undoing the restore brings the root's changes back.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures_alp import AlpWorld, WorldFactory
from model_server import TextReply, ToolCallReply

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

#: Claude Code may use Bash and Write without asking (a headless run has nobody to ask)
EDITOR = """
[agents.editor]
runtime = "claude"
allowedTools = ["Bash", "Write"]
"""

BASH_EDIT = (
    "printf 'changed\\n' > kept.txt; rm gone.txt; printf x >> ignored.log; "
    "printf 'by the root' > ../outside.txt"
)


def seed(work: Path) -> dict[str, bytes]:
    (work / "kept.txt").write_bytes(b"original \x00\xff bytes\n")
    (work / "gone.txt").write_text("to be deleted\n")
    (work / ".gitignore").write_text("*.log\n")
    (work / "ignored.log").write_text("log\n")
    (work.parent / "outside.txt").write_text("outside\n")
    return tree(work)


def tree(path: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(path)): p.read_bytes()
        for p in sorted(path.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def undo_round_trip(world: AlpWorld, thread_id: str, before: dict[str, bytes]) -> None:
    work = world.work
    after = tree(work)
    outside = (work.parent / "outside.txt").read_bytes()
    world.call("daemon/sweep")  # the post checkpoint is taken after the settle
    diff = world.cli_json("thread", "diff", thread_id)
    statuses = {f["path"]: f["status"] for f in diff["files"]}
    assert statuses.get("kept.txt") == "M" and statuses.get("gone.txt") == "D", diff["files"]
    assert statuses.get("new/deep/made.txt") == "A", diff["files"]
    assert "ignored.log" not in statuses

    done = world.cli("thread", "undo", thread_id, "--files")
    assert done.returncode == 0, done.stderr
    assert "delete  new/deep/made.txt" in done.stdout and "restore kept.txt" in done.stdout
    restored = tree(work)
    assert restored == {**before, "ignored.log": after["ignored.log"]}
    assert not (work / "new").exists()
    assert (work.parent / "outside.txt").read_bytes() == outside  # never touched by alp

    # undoing the restore brings the root's changes back
    world.call("thread/restore", threadId=thread_id)
    assert tree(work) == after

    # a change after the root: the restore refuses, and changes nothing
    (work / "kept.txt").write_text("the person's later edit")
    refused = world.cli("thread", "restore", thread_id, "--root", "1", "--files")
    assert refused.returncode != 0 and "WORKSPACE_CHANGED" in refused.stderr + refused.stdout
    assert (work / "kept.txt").read_text() == "the person's later edit"


def test_claude_edits_through_bash_and_its_write_tool_are_undone(
    make_world: WorldFactory,
) -> None:
    world = make_world(EDITOR)
    before = seed(world.work)
    made = world.work / "new" / "deep" / "made.txt"
    world.server.script(
        ToolCallReply(BASH_EDIT),
        ToolCallReply(tool="Write", arguments={"file_path": str(made), "content": "fresh"}),
        TextReply("edited"),
    )
    thread_id = world.cli_json("thread", "create", "--title", "files")["id"]
    execution_id = world.continue_headless(thread_id, "edit the files", agent="editor")
    settled = world.wait_settled(execution_id, timeout=90)
    assert settled["outcome"] == "completed", world.run_output(execution_id)
    assert made.exists() and made.read_text() == "fresh", world.run_output(execution_id)
    assert (world.work / "kept.txt").read_text() == "changed\n"
    undo_round_trip(world, thread_id, before)


def test_codex_edits_through_its_shell_are_undone(alp_world: AlpWorld) -> None:
    world = alp_world
    before = seed(world.work)
    world.server.script(
        ToolCallReply(BASH_EDIT + "; mkdir -p new/deep; printf fresh > new/deep/made.txt"),
        TextReply("edited"),
    )
    thread_id = world.cli_json("thread", "create", "--title", "files")["id"]
    execution_id = world.continue_headless(thread_id, "edit the files", agent="coder")
    settled = world.wait_settled(execution_id, timeout=90)
    assert settled["outcome"] == "completed", world.run_output(execution_id)
    made = world.work / "new" / "deep" / "made.txt"
    assert made.read_text() == "fresh", json.dumps(world.show(execution_id))[:2000]
    undo_round_trip(world, thread_id, before)
