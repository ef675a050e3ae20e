"""File checkpoints on a real alpd with `command` roots (issue 27, points 1–3): a root's
changes are diffed and undone exactly (bytes, created files removed, ignored files and files
outside the workspace untouched), a later change makes the restore refuse, the restore is
undoable; a git workspace's own repository (index, refs, config) is never written, a dirty
index stays dirty; a 1 GB sparse file is skipped and said so; `alp ps` shows the size.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from daemons import StartAlpd

from alpctl.client import RpcError
from alpd.testing.daemon import DaemonProcess

EDIT = (
    "printf 'changed\\n' > kept.txt; rm gone.txt; mkdir -p new/deep; "
    "printf 'fresh' > new/deep/made.txt; printf 'x' >> ignored.log; "
    "printf 'outside' > ../outside.txt"
)


@pytest.fixture(scope="module")
def d(start_module_alpd: StartAlpd) -> DaemonProcess:
    return start_module_alpd()


def call(d: DaemonProcess, method: str, params: dict[str, Any]) -> dict[str, Any]:
    result = d.call(method, params)
    assert isinstance(result, dict)
    return result


def run_root(d: DaemonProcess, thread_id: str, script: str, cwd: Path) -> dict[str, Any]:
    started = call(
        d,
        "thread/continue",
        {
            "threadId": thread_id,
            "headless": True,
            "runtime": "command",
            "args": ["sh", "-c", script],
            "cwd": str(cwd),
        },
    )
    execution_id = started["execution"]["id"]
    while True:
        done = call(d, "execution/wait", {"executionId": execution_id, "timeout": 5})
        if done["status"] == "settled":
            call(d, "daemon/sweep", {})  # the after-settle work (the post checkpoint) is done
            return done


def tree(path: Path) -> dict[str, bytes]:
    """Every file under `path` with its bytes (`.git` included)."""
    return {
        str(p.relative_to(path)): p.read_bytes()
        for p in sorted(path.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def seed(work: Path) -> None:
    work.mkdir(parents=True, exist_ok=True)
    (work / "kept.txt").write_bytes(b"original \x00\xff bytes\n")
    (work / "gone.txt").write_text("to be deleted\n")
    (work / ".gitignore").write_text("*.log\n")
    (work / "ignored.log").write_text("log\n")
    (work / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(work / "run.sh", 0o755)


def new_thread(d: DaemonProcess, work: Path) -> str:
    return str(call(d, "thread/create", {"title": "files", "cwd": str(work)})["id"])


def test_undo_files_restores_a_plain_directory_exactly_and_can_itself_be_undone(
    d: DaemonProcess, tmp_path: Path
) -> None:
    work = tmp_path / "plain"
    seed(work)
    before = tree(work)
    thread_id = new_thread(d, work)
    run_root(d, thread_id, EDIT, work)
    after = tree(work)
    assert (tmp_path / "outside.txt").exists()

    diff = call(d, "thread/diff", {"threadId": thread_id})
    assert diff["root"] == 1 and diff["step"] == "1"
    assert {f["path"]: f["status"] for f in diff["files"]} == {
        "kept.txt": "M",
        "gone.txt": "D",
        "new/deep/made.txt": "A",
    }
    assert "+fresh" in diff["patch"] and "Binary files" in diff["patch"]  # kept.txt has a NUL

    done = d.cli("thread", "undo", thread_id, "--files")
    assert done.returncode == 0, done.stderr
    assert "delete  new/deep/made.txt" in done.stdout and "restore kept.txt" in done.stdout
    restored = tree(work)
    assert restored == {**before, "ignored.log": b"log\nx"}  # ignored: left as the root made it
    assert not (work / "new").exists()  # the directories it created went with the file
    assert os.stat(work / "run.sh").st_mode & 0o777 == 0o755
    assert (tmp_path / "outside.txt").read_text() == "outside"  # outside: never touched

    # undoing the restore brings the root's changes back
    again = call(d, "thread/restore", {"threadId": thread_id})
    assert again["undone"] == "restore-1" and again["step"] == "restore-2"
    assert tree(work) == after


def test_a_change_after_the_root_makes_the_restore_refuse_unless_forced(
    d: DaemonProcess, tmp_path: Path
) -> None:
    work = tmp_path / "later"
    seed(work)
    thread_id = new_thread(d, work)
    run_root(d, thread_id, "printf 'root' > kept.txt", work)
    (work / "kept.txt").write_text("the person's later edit")
    with pytest.raises(RpcError) as info:
        d.call("thread/restore", {"threadId": thread_id, "root": 1})
    assert info.value.name == "WORKSPACE_CHANGED"
    assert info.value.data["changed"] == ["kept.txt"]
    assert (work / "kept.txt").read_text() == "the person's later edit"
    refused = d.cli("thread", "restore", thread_id, "--root", "1", "--files")
    assert refused.returncode != 0 and "WORKSPACE_CHANGED" in refused.stderr + refused.stdout

    plan = call(
        d, "thread/restore", {"threadId": thread_id, "root": 1, "force": True, "dryRun": True}
    )
    assert plan["changes"] == [{"path": "kept.txt", "action": "write", "why": "modified"}]
    assert (work / "kept.txt").read_text() == "the person's later edit"
    call(d, "thread/restore", {"threadId": thread_id, "root": 1, "force": True})
    assert (work / "kept.txt").read_bytes() == b"original \x00\xff bytes\n"
    # the forced restore is checkpointed: the later edit comes back
    call(d, "thread/restore", {"threadId": thread_id})
    assert (work / "kept.txt").read_text() == "the person's later edit"


def git(work: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(
        ["git", "-C", str(work), *args], env=env, check=True, capture_output=True, text=True
    ).stdout


def test_a_git_workspace_with_a_dirty_index_is_never_written(
    d: DaemonProcess, tmp_path: Path
) -> None:
    work = tmp_path / "repo"
    seed(work)
    git(work, "init", "-q")
    git(work, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    (work / "kept.txt").write_text("staged change\n")
    git(work, "add", "kept.txt")  # the index is dirty: staged, uncommitted
    (work / "kept.txt").write_text("unstaged change\n")
    status = git(work, "status", "--porcelain")
    dot_git = tree(work / ".git")

    thread_id = new_thread(d, work)
    run_root(d, thread_id, "printf 'by the root' > kept.txt; printf n > new.txt", work)
    assert git(work, "status", "--porcelain") != status
    call(d, "thread/diff", {"threadId": thread_id})
    call(d, "thread/restore", {"threadId": thread_id})
    call(d, "daemon/sweep", {})

    assert (work / "kept.txt").read_text() == "unstaged change\n"
    assert not (work / "new.txt").exists()
    assert git(work, "status", "--porcelain") == status
    assert git(work, "diff", "--cached", "--name-only") == "kept.txt\n"
    assert tree(work / ".git") == dot_git  # index, refs, config, objects: byte for byte
    shadow = list((d.home / "checkpoints").glob("repo-*.git"))
    assert len(shadow) == 1
    alternates = (shadow[0] / "objects" / "info" / "alternates").read_text().strip()
    assert alternates == str((work / ".git" / "objects").resolve())


def test_a_large_untracked_file_is_skipped_and_said_so(d: DaemonProcess, tmp_path: Path) -> None:
    work = tmp_path / "big"
    seed(work)
    thread_id = new_thread(d, work)
    script = "truncate -s 1G huge.bin; printf 'small' > small.txt"
    run_root(d, thread_id, script, work)
    diff = call(d, "thread/diff", {"threadId": thread_id})
    assert [f["path"] for f in diff["files"]] == ["small.txt"]
    assert diff["skipped"] == [{"path": "huge.bin", "reason": "large", "bytes": 1024**3}]
    human = d.cli("thread", "diff", thread_id)
    assert "not checkpointed: huge.bin — large (1073741824 bytes)" in human.stdout
    shadow = next((d.home / "checkpoints").glob("big-*.git"))
    assert sum(p.stat().st_size for p in shadow.rglob("*") if p.is_file()) < 10 * 1024**2
    # undo: the small file goes, the huge one (never checkpointed) stays
    call(d, "thread/restore", {"threadId": thread_id})
    assert not (work / "small.txt").exists() and (work / "huge.bin").stat().st_size == 1024**3


def test_ps_shows_the_checkpoints_size(d: DaemonProcess, tmp_path: Path) -> None:
    work = tmp_path / "ps"
    seed(work)
    run_root(d, new_thread(d, work), "printf 1 > one.txt", work)
    ps = json.loads(d.cli("ps", "--json").stdout)
    assert ps["checkpoints"]["enabled"] is True
    assert ps["checkpoints"]["maxBytes"] == 2 * 1024**3
