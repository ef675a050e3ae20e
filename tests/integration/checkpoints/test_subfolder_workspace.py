"""A workspace in a subfolder of a git repository (issue 27, point 1; docs/checkpoints.md): the
checkpoints honour the ignore rules above the workspace — the repository's root `.gitignore`
(a pattern anywhere, one anchored into the subfolder, a negation) and its `.git/info/exclude` —
so files they ignore inside the subfolder are neither diffed nor restored; and nothing outside
the subfolder (sibling folders, the repository's top, its `.git`) is read into a checkpoint or
touched by diff or `undo --files`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from daemons import StartAlpd

from alpd.testing.daemon import DaemonProcess

ROOT_IGNORE = "secrets/\n*.tmp\n!keep.tmp\n/app/build/\n/lib/generated/\n"
#: the root: a tracked change, a new file, and changes to everything the workspace ignores
#: and to siblings outside it
EDIT = (
    "printf 'changed\\n' > src/main.py; printf 'new' > src/new.py; rm -f old.txt; "
    "printf 'leak' >> secrets/key.txt; printf 'x' >> scratch.tmp; printf 'y' >> keep.tmp; "
    "printf 'z' >> build/out.bin; printf 'p' >> private.txt; "
    "printf 'sibling' >> ../lib/util.py; printf 'top' >> ../top.txt"
)


#: an agent whose workspace is the directory it is run from (docs/agents.md): a subfolder
CONFIG = """
[agents.sub]
runtime = "command"
workspace = "cwd"
"""


@pytest.fixture
def d(start_alpd: StartAlpd) -> DaemonProcess:
    return start_alpd(CONFIG)


def git(where: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(
        ["git", "-C", str(where), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        env=env, check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip


def tree(path: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(path)): p.read_bytes()
        for p in sorted(path.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def make_repo(repo: Path) -> Path:
    """A repository whose workspace is `app/`; returns the workspace."""
    files = {
        ".gitignore": ROOT_IGNORE,
        "top.txt": "top\n",
        "lib/util.py": "def util(): ...\n",
        "app/src/main.py": "print('main')\n",
        "app/old.txt": "old\n",
        "app/keep.tmp": "kept despite *.tmp\n",
        "app/secrets/key.txt": "s3cret\n",
        "app/scratch.tmp": "scratch\n",
        "app/build/out.bin": "\x00built\n",
        "app/private.txt": "mine\n",
    }
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "init", "-q")
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("private.txt\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one")
    tracked = set(git(repo, "ls-files").split())
    assert "app/secrets/key.txt" not in tracked and "app/keep.tmp" in tracked
    return repo / "app"


def run_root(d: DaemonProcess, thread_id: str, script: str, cwd: Path) -> None:
    started: Any = d.call(
        "thread/continue",
        {"threadId": thread_id, "headless": True, "agent": "sub",
         "args": ["sh", "-c", script], "cwd": str(cwd)},
    )  # fmt: skip
    while True:
        done: Any = d.call(
            "execution/wait", {"executionId": started["execution"]["id"], "timeout": 5}
        )
        if done["status"] == "settled":
            d.call("daemon/sweep", {})
            return


def test_a_subfolder_workspace_honours_the_ignores_above_it_and_touches_nothing_outside(
    d: DaemonProcess, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    work = make_repo(repo)
    before = tree(work)
    dot_git = tree(repo / ".git")
    thread: Any = d.call(
        "thread/create", {"title": "subfolder", "cwd": str(work), "workspace": str(work)}
    )
    run_root(d, thread["id"], EDIT, work)
    after = tree(work)
    outside_after = {p: b for p, b in tree(repo).items() if not p.startswith(("app/", ".git/"))}
    assert outside_after["lib/util.py"].endswith(b"sibling")

    diff: Any = d.call("thread/diff", {"threadId": thread["id"]})
    # only what the workspace's rules keep: not secrets/, *.tmp, build/ (anchored in the root's
    # .gitignore) or private.txt (the repository's info/exclude); keep.tmp is un-ignored
    assert {f["path"]: f["status"] for f in diff["files"]} == {
        "src/main.py": "M",
        "src/new.py": "A",
        "old.txt": "D",
        "keep.tmp": "M",
    }
    assert "sibling" not in diff.get("patch", "") and "leak" not in diff.get("patch", "")
    assert not any(s["path"].startswith("secrets") for s in diff.get("skipped", []))

    done = d.cli("thread", "undo", thread["id"], "--files")
    assert done.returncode == 0, done.stderr
    restored = tree(work)
    ignored = ("secrets/key.txt", "scratch.tmp", "build/out.bin", "private.txt")
    # the workspace's checkpointed files are back; what its rules ignore stays as the root left it
    assert {p: b for p, b in restored.items() if p not in ignored} == {
        p: b for p, b in before.items() if p not in ignored
    }
    assert {p: restored[p] for p in ignored} == {p: after[p] for p in ignored}
    # outside the subfolder: exactly as the root left it, and the repository never written
    assert {
        p: b for p, b in tree(repo).items() if not p.startswith(("app/", ".git/"))
    } == outside_after
    assert tree(repo / ".git") == dot_git

    # a new rule in the root's .gitignore is read at the next checkpoint
    (repo / ".gitignore").write_text(ROOT_IGNORE + "app/src/new.py\n")
    run_root(d, thread["id"], "printf 'again' > src/new.py; printf 'v2' > src/main.py", work)
    again: Any = d.call("thread/diff", {"threadId": thread["id"]})
    assert {f["path"] for f in again["files"]} == {"src/main.py"}
